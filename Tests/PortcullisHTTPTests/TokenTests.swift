import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth
@testable import PortcullisCrypto
@testable import PortcullisHTTP

/// The claims jwt-kit checks when it verifies our tokens from the JWKS alone.
struct VerifiedClaims: JWTPayload {
    let iss: IssuerClaim
    let aud: AudienceClaim
    let sub: SubjectClaim
    let exp: ExpirationClaim
    let iat: IssuedAtClaim
    let user_id: String
    let auth_time: Int

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

@Suite("Tokens, keys and sessions")
struct TokenTests {
    static func jwks(_ gateway: TestGateway, tenant: String?) async throws -> String {
        let path = tenant.map { "/v1/projects/\(TestGateway.projectId)/tenants/\($0)/jwks" } ?? "/v1/projects/\(TestGateway.projectId)/jwks"
        let response = try await gateway.client.execute(uri: path, method: .get)
        #expect(response.status == .ok)
        return String(buffer: response.body)
    }

    static func verifier(_ jwks: String) async throws -> JWTKeyCollection {
        try await JWTKeyCollection().add(jwksJSON: jwks)
    }

    @Test(
        "ID tokens verify with only the public JWKS, per algorithm; another tenant's JWKS refuses them; rotation keeps old tokens valid",
        arguments: ["RS256", "ES256", "EdDSA"])
    func jwksVerification(algorithm: String) async throws {
        try await TestGateway.run { gateway in
            let a = try await gateway.createTenant(#"{"displayName":"a","allowPasswordSignup":true,"signingAlgorithm":"\#(algorithm)"}"#)
            let b = try await gateway.createTenant(#"{"displayName":"b","allowPasswordSignup":true,"signingAlgorithm":"\#(algorithm)"}"#)
            let session = try await gateway.signUp("k@example.com", tenant: a)
            let jwksA = try await Self.jwks(gateway, tenant: a)
            let verified = try await Self.verifier(jwksA).verify(session.idToken, as: VerifiedClaims.self)
            #expect(verified.sub.value == session.uid && verified.user_id == session.uid)
            #expect(verified.iss.value == "http://localhost/\(TestGateway.projectId)/tenants/\(a)")
            #expect(verified.aud.value == [TestGateway.projectId])
            let header = try JSONValue.parse(Base64URL.decode(String(session.idToken.split(separator: ".")[0])) ?? [])
            #expect(header.value(at: ["alg"]) == .string(algorithm))
            #expect(header.value(at: ["typ"]) == .string("JWT"))
            guard case .string(let oldKid)? = header.value(at: ["kid"]) else { throw TestSetupError("no kid") }

            _ = try await gateway.signUp("k@example.com", tenant: b)
            let jwksB = try await Self.jwks(gateway, tenant: b)
            await #expect(throws: (any Error).self) { try await Self.verifier(jwksB).verify(session.idToken, as: VerifiedClaims.self) }
            // And the gateway refuses tenant A's token as tenant B's.
            try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: b)
                .expectEnvelope(.badRequest, "TENANT_ID_MISMATCH")

            let rotated = try await gateway.send(.post, "\(gateway.tenants)/\(a)/keys:rotate").json()
            guard case .string(let newKid)? = rotated.value(at: ["kid"]) else { throw TestSetupError("no kid") }
            #expect(newKid != oldKid)
            let fresh = try await gateway.signIn("k@example.com", tenant: a)
            let freshHeader = try JSONValue.parse(Base64URL.decode(String(fresh.idToken.split(separator: ".")[0])) ?? [])
            #expect(freshHeader.value(at: ["kid"]) == .string(newKid))
            let rotatedJWKS = try await Self.verifier(Self.jwks(gateway, tenant: a))
            _ = try await rotatedJWKS.verify(session.idToken, as: VerifiedClaims.self)
            _ = try await rotatedJWKS.verify(fresh.idToken, as: VerifiedClaims.self)
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: a).status == .ok)

            let keys = try await gateway.send(.get, "\(gateway.tenants)/\(a)/keys")
            let listing = String(buffer: keys.body)
            #expect(listing.contains("\"ACTIVE\"") && listing.contains("\"RETIRED\""))
            #expect(!listing.contains("PRIVATE") && !listing.contains("\"d\""))

            let discovery = try await gateway.client.execute(
                uri: "/\(TestGateway.projectId)/tenants/\(a)/.well-known/openid-configuration", method: .get
            ).json()
            #expect(discovery.value(at: ["issuer"]) == .string("http://localhost/\(TestGateway.projectId)/tenants/\(a)"))
            #expect(discovery.value(at: ["jwks_uri"]) == .string("http://localhost/v1/projects/\(TestGateway.projectId)/tenants/\(a)/jwks"))
        }
    }

    @Test("forged tokens are refused: alg=none, HS256 with the public key, unknown kid, expired, wrong issuer, wrong audience, tampered")
    func forgedTokens() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"f","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("f@example.com", tenant: tenant)
            let parts = session.idToken.split(separator: ".").map(String.init)
            let keyring = try await gateway.server.services.tokens.keyrings.keyring(tenant: TenantScope(tenant))
            guard case .object(let payload) = session.claims else { throw TestSetupError("no claims") }
            func encode(_ value: JSONValue) -> String { Base64URL.encode(Array(value.serialized().utf8)) }
            func resigned(_ change: (inout [String: JSONValue]) -> Void) throws -> String {
                var claims = payload
                change(&claims)
                return try keyring.sign(.object(claims), now: SystemClock().now().seconds)
            }
            let now = Int64(Date().timeIntervalSince1970)
            let jwks = try await Self.jwks(gateway, tenant: tenant)
            guard case .array(let keys)? = try JSONValue.parse(Array(jwks.utf8)).value(at: ["keys"]),
                case .string(let modulus)? = keys.first?.value(at: ["n"])
            else { throw TestSetupError("no key") }
            let hsHeader = encode(.object(["alg": "HS256", "kid": .string(keyring.activeKid), "typ": "JWT"]))
            let hsInput = "\(hsHeader).\(parts[1])"
            let hsSignature = HMAC<SHA256>.authenticationCode(
                for: Array(hsInput.utf8), using: SymmetricKey(data: Base64URL.decode(modulus) ?? []))

            let forged: [(String, String, String)] = [
                ("alg none", "\(encode(.object(["alg": "none", "typ": "JWT"]))).\(parts[1]).", "INVALID_ID_TOKEN"),
                (
                    "alg none with kid", "\(encode(.object(["alg": "none", "kid": .string(keyring.activeKid)]))).\(parts[1]).",
                    "INVALID_ID_TOKEN"
                ),
                ("HS256 keyed with the public key", "\(hsInput).\(Base64URL.encode(Array(hsSignature)))", "INVALID_ID_TOKEN"),
                (
                    "unknown kid", "\(encode(.object(["alg": "RS256", "kid": "nope", "typ": "JWT"]))).\(parts[1]).\(parts[2])",
                    "INVALID_ID_TOKEN"
                ),
                (
                    "tampered payload", "\(parts[0]).\(encode(.object(payload.merging(["sub": "someone-else"]) { $1 }))).\(parts[2])",
                    "INVALID_ID_TOKEN"
                ),
                (
                    "expired",
                    try resigned {
                        $0["exp"] = .integer(now - 10); $0["iat"] = .integer(now - 3610)
                    }, "TOKEN_EXPIRED"
                ),
                ("wrong issuer", try resigned { $0["iss"] = "https://evil.example/x" }, "INVALID_ID_TOKEN"),
                ("wrong audience", try resigned { $0["aud"] = "other-project" }, "INVALID_ID_TOKEN"),
                ("issued in the future", try resigned { $0["iat"] = .integer(now + 3600) }, "INVALID_ID_TOKEN"),
                ("empty", "", "MISSING_ID_TOKEN"),
                ("two parts", "\(parts[0]).\(parts[1])", "INVALID_ID_TOKEN"),
            ]
            for (name, token, code) in forged {
                let response = try await gateway.endUser("accounts:lookup", ["idToken": .string(token)], tenant: tenant)
                #expect(response.errorMessage == code, "\(name): \(response.errorMessage ?? "accepted")")
                let verify = try await gateway.client.execute(uri: "/v1/verify", method: .get, headers: [.authorization: "Bearer \(token)"])
                #expect(verify.status == .unauthorized, "\(name) via /v1/verify")
            }
            // The genuine token still works after all that.
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: tenant).status == .ok)
        }
    }
}
