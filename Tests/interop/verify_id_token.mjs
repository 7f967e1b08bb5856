// Verifies a Portcullis ID token with jose (panva/jose), as the README's JavaScript example
// does: the JWKS fetched from the gateway, then signature, issuer, audience, expiry, tenant.
//
// usage: node verify_id_token.mjs JWKS_URL TOKEN ISSUER AUDIENCE TENANT
// prints "ok <sub>" and exits 0, or prints the error and exits 1.
import { createRemoteJWKSet, jwtVerify } from "jose";

const [jwksURL, token, issuer, audience, tenant] = process.argv.slice(2);
try {
    const jwks = createRemoteJWKSet(new URL(jwksURL));
    const { payload } = await jwtVerify(token, jwks, { issuer, audience, algorithms: ["RS256", "ES256", "EdDSA"] });
    if (payload.firebase?.tenant !== tenant) throw new Error("wrong tenant");
    console.log("ok", payload.sub);
} catch (error) {
    console.log("invalid:", error.code ?? error.name, error.message);
    process.exit(1);
}
