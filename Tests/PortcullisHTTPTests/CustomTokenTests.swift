import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
import Testing

/// `accounts:signInWithCustomToken` against service accounts the gateway issued, with
/// tokens minted here (swift-crypto) and by the official firebase-admin SDK.
@Suite("Custom tokens")
struct CustomTokenTests {
    /// A custom-token sign-in's answer.
    struct Answer {
        let idToken: String
        let refreshToken: String
        let isNewUser: Bool

        init(_ response: TestResponse) throws {
            let json = try response.json()
            guard response.status == .ok, json.value(at: ["kind"]) == "identitytoolkit#VerifyCustomTokenResponse",
                case .string(let id)? = json.value(at: ["idToken"]), case .string(let refresh)? = json.value(at: ["refreshToken"]),
                json.value(at: ["expiresIn"]) == "3600", case .bool(let isNew)? = json.value(at: ["isNewUser"])
            else { throw TestSetupError("custom-token sign-in failed: \(String(buffer: response.body))") }
            idToken = id
            refreshToken = refresh
            isNewUser = isNew
        }

        /// The ID token's payload, decoded without verification.
        var claims: JSONValue { Self.payload(idToken) }

        static func payload(_ token: String) -> JSONValue {
            let part = String(token.split(separator: ".")[1])
            return (try? JSONValue.parse(Base64URL.decode(part) ?? [])) ?? .null
        }
    }

    static func signIn(_ gateway: TestGateway, _ token: String, tenant: String? = nil) async throws -> TestResponse {
        try await gateway.endUser("accounts:signInWithCustomToken", ["token": .string(token), "returnSecureToken": true], tenant: tenant)
    }

    @Test("a project account's token signs a new user in with its claims, provider custom; refreshes keep the claims")
    func projectUsers() async throws {
        try await TestGateway.run { gateway in
            let signer = try await TestSigner.create(gateway)
            let token = try signer.mint(uid: "user-1", ["claims": .object(["role": "admin", "plan": .object(["tier": 3])])])
            let first = try Answer(try await Self.signIn(gateway, token))
            #expect(first.isNewUser)
            let claims = first.claims
            #expect(claims.value(at: ["sub"]) == "user-1" && claims.value(at: ["user_id"]) == "user-1")
            #expect(claims.value(at: ["role"]) == "admin" && claims.value(at: ["plan", "tier"]) == .integer(3))
            #expect(claims.value(at: ["firebase", "sign_in_provider"]) == "custom")
            #expect(claims.value(at: ["firebase", "tenant"]) == nil)
            #expect(claims.value(at: ["firebase", "identities"]) == .object([:]))
            #expect(claims.value(at: ["aud"]) == .string(TestGateway.projectId))
            #expect(claims.value(at: ["email"]) == nil && claims.value(at: ["name"]) == nil)

            // The same uid again: the existing user; the token's claims are this session's.
            let second = try Answer(try await Self.signIn(gateway, try signer.mint(uid: "user-1")))
            #expect(!second.isNewUser)
            #expect(second.claims.value(at: ["role"]) == nil)

            let refreshed = try await gateway.refresh(first.refreshToken)
            #expect(refreshed.status == .ok, "\(String(buffer: refreshed.body))")
            guard case .string(let idToken)? = try refreshed.json().value(at: ["id_token"]) else {
                Issue.record("no id_token")
                return
            }
            let again = Answer.payload(idToken)
            #expect(again.value(at: ["role"]) == "admin" && again.value(at: ["plan", "tier"]) == .integer(3))
            #expect(again.value(at: ["firebase", "sign_in_provider"]) == "custom")
            #expect(again.value(at: ["auth_time"]) == claims.value(at: ["auth_time"]))

            // The ID token works at end-user endpoints: the user has an empty profile.
            let lookup = try await gateway.endUser("accounts:lookup", ["idToken": .string(first.idToken)])
            #expect(lookup.status == .ok)
            let user = try lookup.json().value(at: ["users"]).flatMap { value -> JSONValue? in
                if case .array(let users) = value { return users.first }
                return nil
            }
            #expect(user?.value(at: ["localId"]) == "user-1")
            #expect(user?.value(at: ["email"]) == nil && user?.value(at: ["displayName"]) == nil)
        }
    }

    @Test("the token's claims win over the user's stored custom claims where both name one")
    func claimsOverStoredAttributes() async throws {
        try await TestGateway.run { gateway in
            let signer = try await TestSigner.create(gateway)
            _ = try Answer(try await Self.signIn(gateway, try signer.mint(uid: "mixed")))
            let update = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/accounts:update",
                json: #"{"localId":"mixed","customAttributes":"{\"role\":\"stored\",\"team\":\"blue\"}"}"#)
            #expect(update.status == .ok, "\(String(buffer: update.body))")
            let answer = try Answer(
                try await Self.signIn(gateway, try signer.mint(uid: "mixed", ["claims": .object(["role": "token"])])))
            #expect(answer.claims.value(at: ["role"]) == "token" && answer.claims.value(at: ["team"]) == "blue")
        }
    }

    @Test("tenants: a tenant account signs for its tenant; a project account signs for any tenant with tenant_id")
    func tenants() async throws {
        try await TestGateway.run { gateway in
            // Self-service sign-up is off: custom-token sign-in is admin-sanctioned and creates users anyway.
            let tenant = try await gateway.createTenant(
                #"{"displayName":"ct","client":{"permissions":{"disabledUserSignup":true}}}"#)
            let own = try await TestSigner.create(gateway, tenant: tenant)
            let project = try await TestSigner.create(gateway)
            let answer = try Answer(
                try await Self.signIn(gateway, try own.mint(uid: "t-user", ["tenant_id": .string(tenant)]), tenant: tenant))
            #expect(answer.isNewUser)
            #expect(answer.claims.value(at: ["firebase", "tenant"]) == .string(tenant))
            #expect(answer.claims.value(at: ["iss"]) == .string("http://localhost/\(TestGateway.projectId)/tenants/\(tenant)"))
            let viaProject = try Answer(
                try await Self.signIn(gateway, try project.mint(uid: "t-user", ["tenant_id": .string(tenant)]), tenant: tenant))
            #expect(!viaProject.isNewUser)
            #expect(viaProject.claims.value(at: ["firebase", "tenant"]) == .string(tenant))
            // The same uid in the project is another user.
            #expect(try Answer(try await Self.signIn(gateway, try project.mint(uid: "t-user"))).isNewUser)
        }
    }

    @Test("every malformed, forged, mis-scoped or out-of-date token is refused with its code")
    func rejections() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let other = try await gateway.createTenant()
            let signer = try await TestSigner.create(gateway)
            let tenantSigner = try await TestSigner.create(gateway, tenant: tenant)
            let otherSigner = try await TestSigner.create(gateway, tenant: other)
            let now = Int64(Date().timeIntervalSince1970)
            let stranger = TestSigner(
                keyId: signer.keyId, email: signer.email, privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
            func unsigned(_ header: JSONValue, _ claims: [String: JSONValue], signature: [UInt8] = []) -> String {
                Base64URL.encode(header.serializedBytes()) + "." + Base64URL.encode(JSONValue.object(claims).serializedBytes()) + "."
                    + Base64URL.encode(signature)
            }
            // HS256 keyed with the public key: the classic algorithm confusion.
            let hsHeader = JSONValue.object(["alg": "HS256", "typ": "JWT", "kid": .string(signer.keyId)])
            let hsInput =
                Base64URL.encode(hsHeader.serializedBytes()) + "."
                + Base64URL.encode(JSONValue.object(signer.claims(uid: "u")).serializedBytes())
            let hsKey = SymmetricKey(data: Data(signer.privateKey.publicKey.pemRepresentation.utf8))
            let hs256 = hsInput + "." + Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Data(hsInput.utf8), using: hsKey)))

            let cases: [(String, String, String?, String)] = [
                ("empty token", "", nil, "MISSING_CUSTOM_TOKEN"),
                ("not a JWT", "not.a.jwt", nil, "INVALID_CUSTOM_TOKEN"),
                ("two parts", "eyJhbGciOiJSUzI1NiJ9.e30", nil, "INVALID_CUSTOM_TOKEN"),
                (
                    "alg none", unsigned(.object(["alg": "none", "kid": .string(signer.keyId)]), signer.claims(uid: "u")), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                ("HS256 with the public key", hs256, nil, "INVALID_CUSTOM_TOKEN"),
                ("an unknown kid", try signer.mint(uid: "u", kid: String(repeating: "0", count: 40)), nil, "INVALID_CUSTOM_TOKEN"),
                ("an unknown kid is not retried by email", try signer.mint(uid: "u", kid: "nope"), nil, "INVALID_CUSTOM_TOKEN"),
                (
                    "no kid and an unknown email",
                    try signer.mint(uid: "u", ["iss": "who@example.com", "sub": "who@example.com"], kid: .some(nil)),
                    nil, "INVALID_CUSTOM_TOKEN"
                ),
                ("another key's signature", try stranger.mint(uid: "u"), nil, "INVALID_CUSTOM_TOKEN"),
                ("another key's signature, no kid", try stranger.mint(uid: "u", kid: .some(nil)), nil, "INVALID_CUSTOM_TOKEN"),
                ("wrong aud", try signer.mint(uid: "u", ["aud": .string(TestGateway.projectId)]), nil, "INVALID_CUSTOM_TOKEN"),
                ("iss of another signer", try signer.mint(uid: "u", ["iss": "who@example.com"]), nil, "CREDENTIAL_MISMATCH"),
                (
                    "expired", try signer.mint(uid: "u", ["iat": .integer(now - 3700), "exp": .integer(now - 100)]), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                (
                    "exp beyond iat + 1 h", try signer.mint(uid: "u", ["iat": .integer(now), "exp": .integer(now + 3601)]), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                (
                    "iat in the future", try signer.mint(uid: "u", ["iat": .integer(now + 300), "exp": .integer(now + 600)]), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                ("empty uid", try signer.mint(uid: ""), nil, "INVALID_CUSTOM_TOKEN"),
                ("uid of 129 characters", try signer.mint(uid: String(repeating: "u", count: 129)), nil, "INVALID_CUSTOM_TOKEN"),
                ("a reserved claim", try signer.mint(uid: "u", ["claims": .object(["auth_time": 1])]), nil, "FORBIDDEN_CLAIM : auth_time"),
                (
                    "claims over 1000 bytes",
                    try signer.mint(uid: "u", ["claims": .object(["big": .string(String(repeating: "x", count: 1000))])]),
                    nil, "CLAIMS_TOO_LARGE"
                ),
                (
                    "a tenant account's token presented to another tenant",
                    try otherSigner.mint(uid: "u", ["tenant_id": .string(other)]), tenant, "TENANT_ID_MISMATCH"
                ),
                // Its key is unknown to the tenant it claims (keys are looked up in the tenants a request names).
                (
                    "a tenant account signing for another tenant",
                    try tenantSigner.mint(uid: "u", ["tenant_id": .string(other)]), other, "INVALID_CUSTOM_TOKEN"
                ),
                (
                    "a tenant account's token presented to project users",
                    try tenantSigner.mint(uid: "u", ["tenant_id": .string(tenant)]), nil, "TENANT_ID_MISMATCH"
                ),
                ("a tenant account's token without tenant_id", try tenantSigner.mint(uid: "u"), tenant, "TENANT_ID_MISMATCH"),
                (
                    "tenant_id ≠ the request's tenantId", try signer.mint(uid: "u", ["tenant_id": .string(tenant)]), other,
                    "TENANT_ID_MISMATCH"
                ),
                ("tenant_id for project users", try signer.mint(uid: "u", ["tenant_id": .string(tenant)]), nil, "TENANT_ID_MISMATCH"),
                ("a project token presented to a tenant", try signer.mint(uid: "u"), tenant, "TENANT_ID_MISMATCH"),
                ("an unknown tenant", try signer.mint(uid: "u"), "no-such-tenant", "TENANT_NOT_FOUND"),
            ]
            for (what, token, requestTenant, expected) in cases {
                let response = try await Self.signIn(gateway, token, tenant: requestTenant)
                #expect(response.errorMessage?.hasPrefix(expected) == true, "\(what): \(String(buffer: response.body))")
                response.expectEnvelope(.badRequest, expected)
            }
            let missing = try await gateway.endUser("accounts:signInWithCustomToken", [:])
            missing.expectEnvelope(.badRequest, "MISSING_CUSTOM_TOKEN")
            try await gateway.endUser("accounts:signInWithCustomToken", ["token": .array([])]).expectEnvelope(
                .badRequest, "INVALID_ARGUMENT")
            try await gateway.endUser("accounts:signInWithCustomToken", ["token": .string(try signer.mint(uid: "u"))], key: "wrong")
                .expectEnvelope(.badRequest, "API key not valid")
            // Nothing above created a user.
            let lookup = try await gateway.send(.post, "/v1/projects/\(TestGateway.projectId)/accounts:lookup", json: #"{"localId":["u"]}"#)
            #expect(try lookup.json().value(at: ["users"]) == nil)
        }
    }

    @Test("without kid the key is found by the iss email; a registered customer key works with and without kid")
    func registeredKeyAndNoKid() async throws {
        try await TestGateway.run { gateway in
            let generated = try await TestSigner.create(gateway)
            #expect(try Answer(try await Self.signIn(gateway, try generated.mint(uid: "nokid", kid: .some(nil)))).isNewUser)

            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let response = try await gateway.send(
                .post, ServiceAccountTests.path(nil),
                json: JSONValue.object([
                    "displayName": "own", "publicKey": .string(key.publicKey.pemRepresentation), "clientEmail": "backend@example.com",
                ]).serialized())
            guard case .string(let keyId)? = try response.json().value(at: ["keyId"]) else {
                Issue.record("register failed: \(String(buffer: response.body))")
                return
            }
            let own = TestSigner(keyId: keyId, email: "backend@example.com", privateKey: key)
            #expect(try Answer(try await Self.signIn(gateway, try own.mint(uid: "own-1"))).isNewUser)
            #expect(try !Answer(try await Self.signIn(gateway, try own.mint(uid: "own-1", kid: .some(nil)))).isNewUser)
        }
    }

    @Test("a custom-token user is no guest: its ID token cannot add a password without a recent sign-in, nor upgrade it")
    func notAnonymous() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            _ = try await gateway.send(
                .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup",
                json: #"{"allowPasswordSignup":true}"#)
            let signer = try await TestSigner.create(gateway)
            let answer = try Answer(try await Self.signIn(gateway, try signer.mint(uid: "bare")))
            try await gateway.endUser(
                "accounts:signUp", ["idToken": .string(answer.idToken), "email": "bare@example.com", "password": "secret12"]
            ).expectEnvelope(.badRequest, "EMAIL_EXISTS")
            clock.advance(seconds: 301)
            try await gateway.endUser("accounts:update", ["idToken": .string(answer.idToken), "password": "secret12"])
                .expectEnvelope(.badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        }
    }

    @Test("a disabled user is refused; a disabled tenant is PROJECT_DISABLED; a deleted account's tokens are refused at once")
    func refusals() async throws {
        try await TestGateway.run { gateway in
            let signer = try await TestSigner.create(gateway)
            _ = try Answer(try await Self.signIn(gateway, try signer.mint(uid: "gone")))
            let disable = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/accounts:update", json: #"{"localId":"gone","disableUser":true}"#)
            #expect(disable.status == .ok)
            try await Self.signIn(gateway, try signer.mint(uid: "gone")).expectEnvelope(.badRequest, "USER_DISABLED")

            let tenant = try await gateway.createTenant(#"{"displayName":"off","disableAuth":true}"#)
            try await Self.signIn(gateway, try signer.mint(uid: "x", ["tenant_id": .string(tenant)]), tenant: tenant)
                .expectEnvelope(.badRequest, "PROJECT_DISABLED")

            let token = try signer.mint(uid: "fresh")
            _ = try Answer(try await Self.signIn(gateway, token))
            #expect(try await gateway.send(.delete, "\(ServiceAccountTests.path(nil))/\(signer.keyId)").status == .ok)
            try await Self.signIn(gateway, token).expectEnvelope(.badRequest, "INVALID_CUSTOM_TOKEN")
            try await Self.signIn(gateway, try signer.mint(uid: "fresh", kid: .some(nil))).expectEnvelope(
                .badRequest, "INVALID_CUSTOM_TOKEN")
        }
    }

    @Test("a service account deleted on instance A stops signing in on instance B, which had its key cached, by NOTIFY")
    func deletionReachesOtherInstances() async throws {
        let settings = try await TestDatabase.create()
        let a = try TestGateway.make(settings: settings)
        let b = try TestGateway.make(settings: settings)
        try await a.application.test(.router) { clientA in
            try await b.application.test(.router) { clientB in
                let key = try await a.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                try await Self.deletion(
                    TestGateway(server: a, client: clientA, projectKey: key), TestGateway(server: b, client: clientB, projectKey: key))
            }
        }
    }

    private static func deletion(_ gatewayA: TestGateway, _ gatewayB: TestGateway) async throws {
        // A change seen through B's listener proves LISTEN is up; B's periodic flush is an hour
        // away, so what follows can only travel by NOTIFY.
        let probe = try await gatewayA.createTenant()
        let cacheB = gatewayB.server.tenantCache
        _ = try await cacheB.settings(tenantId: probe)
        try await gatewayA.patchTenant(probe, mask: "disableAuth", #"{"disableAuth":true}"#)
        #expect(try await eventually { try await cacheB.settings(tenantId: probe).disableAuth } != nil)

        let signer = try await TestSigner.create(gatewayA)
        let withKid = try signer.mint(uid: "b-user")
        let withoutKid = try signer.mint(uid: "b-user", kid: .some(nil))
        _ = try Answer(try await signIn(gatewayB, withKid))
        _ = try Answer(try await signIn(gatewayB, withoutKid))
        #expect(try await gatewayA.send(.delete, "\(ServiceAccountTests.path(nil))/\(signer.keyId)").status == .ok)
        let refused = try await eventually(within: .seconds(3)) { try await refuses(gatewayB, withKid) }
        #expect(refused != nil)
        try await signIn(gatewayB, withoutKid).expectEnvelope(.badRequest, "INVALID_CUSTOM_TOKEN")
    }

    static func refuses(_ gateway: TestGateway, _ token: String) async throws -> Bool {
        let response = try await signIn(gateway, token)
        return response.errorMessage?.hasPrefix("INVALID_CUSTOM_TOKEN") ?? false
    }

    @Test("50 concurrent first sign-ins of one uid make one user: every one succeeds, exactly one is new")
    func concurrentFirstSignIns() async throws {
        try await TestGateway.run { gateway in
            let signer = try await TestSigner.create(gateway)
            let token = try signer.mint(uid: "racer", ["claims": .object(["n": 1])])
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<50 { group.addTask { try Answer(try await Self.signIn(gateway, token)).isNewUser } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.count == 50)
            #expect(results.filter { $0 }.count == 1)
            let lookup = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/accounts:lookup", json: #"{"localId":["racer"]}"#)
            guard case .array(let users)? = try lookup.json().value(at: ["users"]) else {
                Issue.record("no user: \(String(buffer: lookup.body))")
                return
            }
            #expect(users.count == 1)
        }
    }

    @Test("firebase-admin (Python) mints tokens from the gateway's service-account file that sign in, for the project and a tenant")
    func firebaseAdmin() async throws {
        let python = try InteropTests.tool("PORTCULLIS_TEST_PYTHON")
        let script = InteropTests.packageRoot.appendingPathComponent("Tests/interop/mint_custom_token.py").path
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            for scope in [nil, tenant] {
                let signer = try await TestSigner.create(gateway, tenant: scope)
                let file = NSTemporaryDirectory() + "sa-\(UUID().uuidString).json"
                try (signer.file ?? "").write(toFile: file, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(atPath: file) }
                var arguments = [script, file, "py-user", #"{"role":"editor","level":2}"#]
                if let scope { arguments.append(scope) }
                let (status, output) = try InteropTests.run(python, arguments)
                #expect(status == 0, "\(output)")
                let token = output.trimmingCharacters(in: .whitespacesAndNewlines)
                let answer = try Answer(try await Self.signIn(gateway, token, tenant: scope))
                #expect(answer.isNewUser)
                #expect(answer.claims.value(at: ["sub"]) == "py-user")
                #expect(answer.claims.value(at: ["role"]) == "editor" && answer.claims.value(at: ["level"]) == .integer(2))
                #expect(answer.claims.value(at: ["firebase", "sign_in_provider"]) == "custom")
                #expect(answer.claims.value(at: ["firebase", "tenant"]) == scope.map(JSONValue.string))
            }
        }
    }
}
