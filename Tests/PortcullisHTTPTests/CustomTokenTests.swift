import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
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
}
