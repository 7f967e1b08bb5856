import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import PortcullisCore
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
            let keyring = try await gateway.server.tokens.keyrings.keyring(tenantId: tenant)
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

    @Test("refresh rotates the token; a replay inside the grace window gets the same successor; reuse revokes the session")
    func refreshRotation() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(
                #"{"displayName":"r","allowPasswordSignup":true,"refreshTokenReuseGraceSeconds":0}"#)
            let session = try await gateway.signUp("r@example.com", tenant: tenant)
            let first = try await gateway.refresh(session.refreshToken).json()
            guard case .string(let second)? = first.value(at: ["refresh_token"]), case .string(let idToken)? = first.value(at: ["id_token"])
            else {
                throw TestSetupError("no tokens")
            }
            #expect(second != session.refreshToken)
            #expect(first.value(at: ["access_token"]) == .string(idToken))
            #expect(first.value(at: ["user_id"]) == .string(session.uid))
            #expect(first.value(at: ["project_id"]) == .string(TestGateway.projectId))
            #expect(first.value(at: ["expires_in"]) == .string("3600"))
            let authTime = session.claims.value(at: ["auth_time"])
            let refreshedClaims = try JSONValue.parse(Base64URL.decode(String(idToken.split(separator: ".")[1])) ?? [])
            #expect(refreshedClaims.value(at: ["auth_time"]) == authTime)

            // Form-encoded, under the securetoken emulator prefix, as the Firebase SDKs send it.
            let form = try await gateway.client.execute(
                uri: "/securetoken.googleapis.com/v1/token?key=\(TestGateway.apiKey)", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "grant_type=refresh_token&refresh_token=\(second)"))
            #expect(form.status == .ok, "\(String(buffer: form.body))")
            guard case .string(let third)? = try form.json().value(at: ["refresh_token"]) else { throw TestSetupError("no token") }

            clock.advance(seconds: 1)
            // `second` was rotated a second ago with a 0 s grace window: reuse. The whole session dies.
            try await gateway.refresh(second).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh(third).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh("pr1.AA.garbage").expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh("").expectEnvelope(.badRequest, "MISSING_REFRESH_TOKEN")
            // A fresh sign-in starts a new family.
            let again = try await gateway.signIn("r@example.com", tenant: tenant)
            #expect(try await gateway.refresh(again.refreshToken).status == .ok)

            // Within a grace window a replay is allowed (a client retrying a lost answer, two tabs at
            // once) and gets the very same successor, so neither copy is left holding a dead token.
            try await gateway.patchTenant(tenant, mask: "refreshTokenReuseGraceSeconds", #"{"refreshTokenReuseGraceSeconds":30}"#)
            let graced = try await gateway.signIn("r@example.com", tenant: tenant)
            func successor(_ token: String) async throws -> String? {
                guard case .string(let next)? = try await gateway.refresh(token).json().value(at: ["refresh_token"]) else { return nil }
                return next
            }
            let next = try await successor(graced.refreshToken)
            #expect(next != nil)
            #expect(try await successor(graced.refreshToken) == next)
            // Once the successor itself rotates, the first token is two generations old: reuse, even inside
            // the window, and the session dies with every token it handed out.
            let latest = try await successor(next ?? "")
            #expect(latest != nil && latest != next)
            try await gateway.refresh(graced.refreshToken).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh(latest ?? "").expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")

            // A well-formed token naming no session, or a real session with a made-up secret.
            let tenantPart = Base64URL.encode(Array(tenant.utf8))
            let made = "pr2.\(tenantPart).\(SecretToken.random(byteCount: 16)).\(SecretToken.random())"
            try await gateway.refresh(made).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            let victim = try await gateway.signIn("r@example.com", tenant: tenant)
            let sessionId = victim.refreshToken.split(separator: ".")[2]
            try await gateway.refresh("pr2.\(tenantPart).\(sessionId).\(SecretToken.random())")
                .expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
        }
    }

    @Test("a password change revokes other sessions (TOKEN_EXPIRED) and returns fresh tokens; disabled users get USER_DISABLED")
    func revocation() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true}"#)
            let old = try await gateway.signUp("v@example.com", tenant: tenant)
            // "Before" is strictly earlier in whole seconds (for the ID token; its session dies either way).
            clock.advance(seconds: 1)
            let changed = try await gateway.endUser(
                "accounts:update", ["idToken": .string(old.idToken), "password": "a new secret"], tenant: tenant)
            #expect(changed.status == .ok, "\(String(buffer: changed.body))")
            let fresh = try Session(changed.json())
            try await gateway.refresh(old.refreshToken).expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            try await gateway.endUser("accounts:lookup", ["idToken": .string(old.idToken)], tenant: tenant)
                .expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(fresh.idToken)], tenant: tenant).status == .ok)
            #expect(try await gateway.refresh(fresh.refreshToken).status == .ok)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "v@example.com", "password": "correct horse"], tenant: tenant
            )
            .expectEnvelope(.badRequest, "INVALID_PASSWORD")
            _ = try await gateway.signIn("v@example.com", "a new secret", tenant: tenant)

            // Admin disable: sign-in is USER_DISABLED, the session's refresh dies.
            let live = try await gateway.signIn("v@example.com", "a new secret", tenant: tenant)
            let disabled = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:update",
                json: #"{"localId":"\#(fresh.uid)","disableUser":true}"#)
            #expect(disabled.status == .ok)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "v@example.com", "password": "a new secret"], tenant: tenant
            )
            .expectEnvelope(.badRequest, "USER_DISABLED")
            let refreshed = try await gateway.refresh(live.refreshToken)
            #expect(["USER_DISABLED", "TOKEN_EXPIRED"].contains(refreshed.errorMessage ?? ""), "\(refreshed.errorMessage ?? "ok")")
        }
    }

    @Test("delete, email and password changes need a recent sign-in; signing in again gives a fresh auth_time")
    func recentLogin() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"w","allowPasswordSignup":true,"recentLoginWindowSeconds":1}"#)
            let session = try await gateway.signUp("w@example.com", tenant: tenant)
            clock.advance(seconds: 2)
            for body: [String: JSONValue] in [["password": "another secret"], ["email": "w2@example.com"]] {
                var request = body
                request["idToken"] = .string(session.idToken)
                try await gateway.endUser("accounts:update", request, tenant: tenant).expectEnvelope(
                    .badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            }
            try await gateway.endUser("accounts:delete", ["idToken": .string(session.idToken)], tenant: tenant)
                .expectEnvelope(.badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            // Profile changes are not sensitive.
            let renamed = try await gateway.endUser(
                "accounts:update", ["idToken": .string(session.idToken), "displayName": "W"], tenant: tenant)
            #expect(try renamed.json().value(at: ["displayName"]) == .string("W"))
            #expect(try renamed.json().value(at: ["idToken"]) == nil)

            let again = try await gateway.signIn("w@example.com", tenant: tenant)
            #expect(again.claims.value(at: ["auth_time"]) != session.claims.value(at: ["auth_time"]))
            #expect(try await gateway.endUser("accounts:delete", ["idToken": .string(again.idToken)], tenant: tenant).status == .ok)
            try await gateway.endUser("accounts:lookup", ["idToken": .string(again.idToken)], tenant: tenant).expectEnvelope(
                .badRequest, "USER_NOT_FOUND")
        }
    }

    @Test("refresh bodies: form-encoded with %XX escapes, or JSON in either spelling; a bad escape is INVALID_ARGUMENT")
    func refreshBodies() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"f","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("f@example.com", tenant: tenant)
            func post(_ body: String, json: Bool = false) async throws -> TestResponse {
                try await gateway.client.execute(
                    uri: "/v1/token?key=\(TestGateway.apiKey)", method: .post,
                    headers: [.contentType: json ? "application/json" : "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: body))
            }
            let escaped = session.refreshToken.replacingOccurrences(of: ".", with: "%2E")
            let form = try await post("grant_type=refresh_token&refresh_token=\(escaped)")
            #expect(form.status == .ok, "\(String(buffer: form.body))")
            guard case .string(let next)? = try form.json().value(at: ["refresh_token"]) else { throw TestSetupError("no token") }
            let camel = try await post(#"{"grantType":"refresh_token","refreshToken":"\#(next)"}"#, json: true)
            #expect(camel.status == .ok, "\(String(buffer: camel.body))")
            try await post("grant_type=refresh_token&refresh_token=%zz").expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await post("refresh_token=\(next)").expectEnvelope(.badRequest, "INVALID_GRANT_TYPE")
        }
    }
}
