"""Verifies a Portcullis ID token with PyJWT, from the tenant's JWKS alone.

usage: verify_id_token.py JWKS_FILE TOKEN ISSUER AUDIENCE
prints "ok <sub>" and exits 0, or prints the error and exits 1.
"""
import json
import sys

import jwt

def main() -> int:
    jwks_file, token, issuer, audience = sys.argv[1:5]
    with open(jwks_file) as handle:
        keyset = jwt.PyJWKSet.from_dict(json.load(handle))
    try:
        kid = jwt.get_unverified_header(token).get("kid")
        key = next((k for k in keyset.keys if k.key_id == kid), None)
        if key is None:
            raise jwt.InvalidTokenError(f"no key {kid} in the JWKS")
        claims = jwt.decode(
            token, key.key, algorithms=["RS256", "ES256", "EdDSA"], audience=audience, issuer=issuer,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
        )
    except jwt.PyJWTError as error:
        print(f"invalid: {type(error).__name__}: {error}")
        return 1
    print("ok", claims["sub"])
    return 0

if __name__ == "__main__":
    sys.exit(main())
