import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("End-user accounts")
struct AccountTests {
    /// Runs `body` once for project users (tenant nil) and once for a fresh tenant, both with password and anonymous sign-up on.
    static func forEachScope(_ body: @Sendable (TestGateway, String?) async throws -> Void) async throws {
        try await TestGateway.run { gateway in
            try await gateway.send(
                .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup,enableAnonymousUser",
                json: #"{"allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            try await body(gateway, nil)
            let tenant = try await gateway.createTenant(#"{"displayName":"acct","allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            try await body(gateway, tenant)
        }
    }

    @Test("sign up, sign in, look up, and every error of the password flow, for project users and a tenant")
    func passwordFlow() async throws {
        try await Self.forEachScope { gateway, tenant in
            let session = try await gateway.signUp("Ada@Example.com", tenant: tenant)
            let claims = session.claims
            #expect(claims.value(at: ["sub"]) == .string(session.uid))
            #expect(claims.value(at: ["user_id"]) == .string(session.uid))
            #expect(claims.value(at: ["aud"]) == .string(TestGateway.projectId))
            #expect(
                claims.value(at: ["iss"]) == .string("http://localhost/\(TestGateway.projectId)" + (tenant.map { "/tenants/\($0)" } ?? "")))
            #expect(claims.value(at: ["email"]) == .string("ada@example.com"))
            #expect(claims.value(at: ["email_verified"]) == .bool(false))
            #expect(claims.value(at: ["firebase", "sign_in_provider"]) == .string("password"))
            #expect(claims.value(at: ["firebase", "tenant"]) == tenant.map(JSONValue.string))
            #expect(claims.value(at: ["firebase", "identities", "email"]) == .array([.string("ada@example.com")]))

            let signedIn = try await gateway.signIn("ada@example.COM", tenant: tenant)
            #expect(signedIn.uid == session.uid)
            let lookup = try await gateway.endUser("accounts:lookup", ["idToken": .string(signedIn.idToken)], tenant: tenant).json()
            #expect(lookup.value(at: ["users"]).map { if case .array(let users) = $0 { users.count } else { 0 } } == 1)
            let text = lookup.serialized()
            // Google's placeholder ("REDACTED"), never the hash.
            #expect(lookup.list(at: ["users"]).first?.string(at: ["passwordHash"]) == "UkVEQUNURUQ=")
            #expect(!text.contains("scrypt") && !text.contains("correct horse"))

            func expectError(
                _ method: String, _ body: [String: JSONValue], _ message: String, sourceLocation: SourceLocation = #_sourceLocation
            ) async throws {
                let response = try await gateway.endUser(method, body, tenant: tenant)
                response.expectEnvelope(.badRequest, message, sourceLocation: sourceLocation)
            }
            try await expectError("accounts:signUp", ["email": "ADA@example.com", "password": "another one"], "EMAIL_EXISTS")
            try await expectError("accounts:signUp", ["email": "not-an-email", "password": "secret1"], "INVALID_EMAIL")
            try await expectError("accounts:signUp", ["password": "secret1"], "MISSING_EMAIL")
            try await expectError("accounts:signUp", ["email": "b@example.com"], "MISSING_PASSWORD")
            try await expectError(
                "accounts:signUp", ["email": "b@example.com", "password": "12345"],
                "WEAK_PASSWORD : Password should be at least 6 characters")
            try await expectError(
                "accounts:signInWithPassword", ["email": "nobody@example.com", "password": "whatever"], "EMAIL_NOT_FOUND")
            try await expectError(
                "accounts:signInWithPassword", ["email": "ada@example.com", "password": "wrong password"], "INVALID_PASSWORD")
            try await expectError("accounts:signInWithPassword", ["email": "ada@example.com"], "MISSING_PASSWORD")
            try await expectError("accounts:lookup", [:], "MISSING_ID_TOKEN")
            try await expectError("accounts:lookup", ["idToken": "garbage"], "INVALID_ID_TOKEN")
            try await expectError("accounts:lookup", ["idToken": .string(session.idToken + "x")], "INVALID_ID_TOKEN")

            // Anonymous sign-up gives a user without email.
            let anonymous = try await gateway.endUser("accounts:signUp", [:], tenant: tenant)
            #expect(anonymous.status == .ok)
            #expect(try Session(anonymous.json()).claims.value(at: ["firebase", "sign_in_provider"]) == .string("anonymous"))
        }
    }

    @Test(
        "provider links live in their own table: password sign-up links it, anonymous users have none, an upgrade links it and keeps the uid, an email change moves it, deletion removes it"
    )
    func providerLinks() async throws {
        try await Self.forEachScope { gateway, tenant in
            func links(_ uid: String) async throws -> [String] {
                try await gateway.server.database.withConnection { connection in
                    var found: [String] = []
                    let rows = try await connection.query(
                        "SELECT provider_id || ':' || federated_id FROM user_providers WHERE tenant_id = \(tenant ?? "") AND uid = \(uid)",
                        logger: TestDatabase.logger)
                    for try await link in rows.decode(String.self) { found.append(link) }
                    return found
                }
            }
            func providerInfo(_ idToken: String) async throws -> JSONValue? {
                let users = try await gateway.endUser("accounts:lookup", ["idToken": .string(idToken)], tenant: tenant).json()
                guard case .array(let found)? = users.value(at: ["users"]) else { return nil }
                return found.first?.value(at: ["providerUserInfo"])
            }
            let ada = try await gateway.signUp("links@example.com", tenant: tenant)
            #expect(try await links(ada.uid) == ["password:links@example.com"])
            #expect(
                try await providerInfo(ada.idToken)
                    == .array([
                        .object([
                            "providerId": "password", "federatedId": "links@example.com", "rawId": "links@example.com",
                            "email": "links@example.com",
                        ])
                    ]))
            let methods = try await gateway.endUser("accounts:createAuthUri", ["identifier": "links@example.com"], tenant: tenant).json()
            #expect(methods.value(at: ["signinMethods"]) == .array(["password"]))

            let anonymous = try Session(try await gateway.endUser("accounts:signUp", [:], tenant: tenant).json())
            #expect(try await links(anonymous.uid).isEmpty)
            #expect(try await providerInfo(anonymous.idToken) == .array([]))
            let upgraded = try Session(
                try await gateway.endUser(
                    "accounts:signUp",
                    ["idToken": .string(anonymous.idToken), "email": "upgraded@example.com", "password": "correct horse"],
                    tenant: tenant
                ).json())
            #expect(upgraded.uid == anonymous.uid)
            #expect(upgraded.claims.value(at: ["firebase", "identities", "email"]) == .array(["upgraded@example.com"]))
            #expect(try await links(anonymous.uid) == ["password:upgraded@example.com"])
            #expect(try await gateway.signIn("upgraded@example.com", tenant: tenant).uid == anonymous.uid)

            let moved = try Session(
                try await gateway.endUser(
                    "accounts:update", ["idToken": .string(upgraded.idToken), "email": "moved@example.com"], tenant: tenant
                ).json())
            #expect(try await links(anonymous.uid) == ["password:moved@example.com"])
            guard case .array(let info)? = try await providerInfo(moved.idToken) else { throw TestSetupError("no providers") }
            #expect(info.first?.value(at: ["federatedId"]) == .string("moved@example.com"))

            #expect(try await gateway.endUser("accounts:delete", ["idToken": .string(moved.idToken)], tenant: tenant).status == .ok)
            #expect(try await links(anonymous.uid).isEmpty)
        }
    }

    @Test("email-enumeration protection: INVALID_LOGIN_CREDENTIALS and a createAuthUri that reveals nothing")
    func enumerationProtection() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"priv","allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("known@example.com", tenant: tenant)
            let uri = try await gateway.endUser("accounts:createAuthUri", ["identifier": "known@example.com"], tenant: tenant).json()
            #expect(uri.value(at: ["registered"]) == .bool(true))
            #expect(uri.value(at: ["signinMethods"]) == .array([.string("password")]))

            try await gateway.patchTenant(
                tenant, mask: "emailPrivacyConfig", #"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}}"#)
            for email in ["known@example.com", "unknown@example.com"] {
                try await gateway.endUser(
                    "accounts:signInWithPassword", ["email": .string(email), "password": "wrong pass"], tenant: tenant
                )
                .expectEnvelope(.badRequest, "INVALID_LOGIN_CREDENTIALS")
                let hidden = try await gateway.endUser("accounts:createAuthUri", ["identifier": .string(email)], tenant: tenant).json()
                #expect(hidden.value(at: ["registered"]) == nil && hidden.value(at: ["signinMethods"]) == nil)
            }
        }
    }

    @Test("20 concurrent sign-ups with one email create exactly one user")
    func concurrentSignUps() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"race","allowPasswordSignup":true}"#)
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<20 {
                    group.addTask {
                        let email = index % 2 == 0 ? "race@example.com" : "RACE@example.com"
                        let response = try await gateway.endUser(
                            "accounts:signUp", ["email": .string(email), "password": "secret12"], tenant: tenant)
                        return (response.status.code, response.errorMessage)
                    }
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1)
            #expect(statuses.filter { $0.0 == 400 && $0.1 == "EMAIL_EXISTS" }.count == 19, "\(statuses)")
        }
    }

    @Test("too many failed sign-ins for one account: TOO_MANY_ATTEMPTS_TRY_LATER, even with the right password")
    func attemptLimits() async throws {
        try await TestGateway.run { gateway in
            try await gateway.send(
                .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup",
                json: #"{"allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("target@example.com")
            for _ in 0..<10 {
                try await gateway.endUser("accounts:signInWithPassword", ["email": "target@example.com", "password": "guess123"])
                    .expectEnvelope(.badRequest, "INVALID_PASSWORD")
            }
            try await gateway.endUser("accounts:signInWithPassword", ["email": "target@example.com", "password": "correct horse"])
                .expectEnvelope(.badRequest, "TOO_MANY_ATTEMPTS_TRY_LATER")
            // Another account is not affected.
            _ = try await gateway.signUp("bystander@example.com")
            _ = try await gateway.signIn("bystander@example.com")
        }
    }
}
