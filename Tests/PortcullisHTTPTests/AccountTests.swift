import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
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
            #expect(!text.contains("passwordHash") && !text.contains("scrypt") && !text.contains("correct horse"))

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

    @Test("a tenant's scrypt parameters make its new hashes; sign-in upgrades a hash made with older ones")
    func tenantScryptParameters() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(
                #"{"displayName":"kdf","allowPasswordSignup":true,"scryptParameters":{"logN":11,"r":4,"p":1}}"#)
            func storedHash(_ uid: String) async throws -> String? {
                try await gateway.server.database.withConnection { connection in
                    let rows = try await connection.query(
                        "SELECT password_hash FROM users WHERE tenant_id = \(tenant) AND uid = \(uid)", logger: TestDatabase.logger)
                    for try await hash in rows.decode(String?.self) { return hash }
                    return nil
                }
            }
            let session = try await gateway.signUp("kdf@example.com", tenant: tenant)
            #expect(try await storedHash(session.uid)?.hasPrefix("$scrypt$ln=11,r=4,p=1$") == true)
            // Other tenants keep the daemon's default (logN 10 in tests).
            let other = try await gateway.createTenant(#"{"displayName":"kdf2","allowPasswordSignup":true}"#)
            let elsewhere = try await gateway.signUp("kdf@example.com", tenant: other)
            #expect(elsewhere.uid != session.uid)

            try await gateway.patchTenant(tenant, mask: "scryptParameters", #"{"scryptParameters":{"logN":12}}"#)
            #expect(try await gateway.signIn("kdf@example.com", tenant: tenant).uid == session.uid)
            #expect(try await storedHash(session.uid)?.hasPrefix("$scrypt$ln=12,r=8,p=1$") == true)
            #expect(try await gateway.signIn("kdf@example.com", tenant: tenant).uid == session.uid)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "kdf@example.com", "password": "wrong one"], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_PASSWORD")
        }
    }

    @Test("tenant errors: TENANT_NOT_FOUND, TENANT_ID_MISMATCH, PROJECT_DISABLED, OPERATION_NOT_ALLOWED, PASSWORD_LOGIN_DISABLED, API key")
    func tenantErrors() async throws {
        try await TestGateway.run { gateway in
            let a = try await gateway.createTenant(#"{"displayName":"a","allowPasswordSignup":true}"#)
            let b = try await gateway.createTenant(#"{"displayName":"b","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("x@example.com", tenant: a)

            try await gateway.endUser("accounts:signUp", ["email": "y@example.com", "password": "secret1"], tenant: "no-such-tenant")
                .expectEnvelope(.badRequest, "TENANT_NOT_FOUND")
            try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: b)
                .expectEnvelope(.badRequest, "TENANT_ID_MISMATCH")
            try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)])
                .expectEnvelope(.badRequest, "TENANT_ID_MISMATCH")

            try await gateway.patchTenant(a, mask: "allowPasswordSignup", #"{"allowPasswordSignup":false}"#)
            try await gateway.endUser("accounts:signUp", ["email": "y@example.com", "password": "secret1"], tenant: a)
                .expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED")
            try await gateway.endUser("accounts:signInWithPassword", ["email": "x@example.com", "password": "correct horse"], tenant: a)
                .expectEnvelope(.badRequest, "PASSWORD_LOGIN_DISABLED")

            try await gateway.patchTenant(b, mask: "disableAuth", #"{"disableAuth":true}"#)
            try await gateway.endUser("accounts:signUp", ["email": "y@example.com", "password": "secret1"], tenant: b)
                .expectEnvelope(.badRequest, "PROJECT_DISABLED")

            try await gateway.endUser("accounts:signUp", [:], tenant: a, key: nil)
                .expectEnvelope(.badRequest, "API key not valid. Please pass a valid API key.")
            try await gateway.endUser("accounts:signUp", [:], tenant: a, key: "wrong")
                .expectEnvelope(.badRequest, "API key not valid. Please pass a valid API key.")
        }
    }

    @Test(
        "disabledUserSignup and disabledUserDeletion give ADMIN_ONLY_OPERATION to end users of that tenant only; admins still create and delete"
    )
    func selfServiceRestrictions() async throws {
        try await TestGateway.run { gateway in
            let locked = try await gateway.createTenant(#"{"displayName":"locked","allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            let open = try await gateway.createTenant(#"{"displayName":"open","allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            let existing = try await gateway.signUp("old@example.com", tenant: locked)

            try await gateway.patchTenant(
                locked, mask: "client.permissions",
                #"{"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}"#)
            // The very next request sees the switch.
            try await gateway.endUser("accounts:signUp", ["email": "new@example.com", "password": "secret1"], tenant: locked)
                .expectEnvelope(.badRequest, "ADMIN_ONLY_OPERATION")
            try await gateway.endUser("accounts:signUp", [:], tenant: locked).expectEnvelope(.badRequest, "ADMIN_ONLY_OPERATION")
            try await gateway.endUser("accounts:delete", ["idToken": .string(existing.idToken)], tenant: locked)
                .expectEnvelope(.badRequest, "ADMIN_ONLY_OPERATION")
            // Existing users still sign in.
            _ = try await gateway.signIn("old@example.com", tenant: locked)

            // The other tenant is untouched.
            let other = try await gateway.signUp("new@example.com", tenant: open)
            #expect(try await gateway.endUser("accounts:delete", ["idToken": .string(other.idToken)], tenant: open).status == .ok)

            // Admins are not restricted.
            let created = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(locked)/accounts",
                json: #"{"email":"admin-made@example.com","password":"secret12","displayName":"By Admin"}"#)
            #expect(created.status == .ok, "\(String(buffer: created.body))")
            _ = try await gateway.signIn("admin-made@example.com", "secret12", tenant: locked)
            let deleted = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(locked)/accounts:delete",
                json: #"{"localId":"\#(existing.uid)"}"#)
            #expect(deleted.status == .ok)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "old@example.com", "password": "correct horse"], tenant: locked
            )
            .expectEnvelope(.badRequest, "EMAIL_NOT_FOUND")

            // Switching back restores self-service.
            try await gateway.patchTenant(locked, mask: "client.permissions", #"{"client":{"permissions":{}}}"#)
            _ = try await gateway.signUp("later@example.com", tenant: locked)

            // Anonymous sign-up while anonymous users are off is ADMIN_ONLY_OPERATION too (Firebase's answer).
            try await gateway.patchTenant(open, mask: "enableAnonymousUser", #"{"enableAnonymousUser":false}"#)
            try await gateway.endUser("accounts:signUp", [:], tenant: open).expectEnvelope(.badRequest, "ADMIN_ONLY_OPERATION")
        }
    }

    @Test("the project config's switches govern project users")
    func projectRestrictions() async throws {
        try await TestGateway.run { gateway in
            try await gateway.send(
                .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup,client.permissions.disabledUserSignup",
                json: #"{"allowPasswordSignup":true,"client":{"permissions":{"disabledUserSignup":true}}}"#)
            try await gateway.endUser("accounts:signUp", ["email": "p@example.com", "password": "secret1"])
                .expectEnvelope(.badRequest, "ADMIN_ONLY_OPERATION")
            let tenant = try await gateway.createTenant(#"{"displayName":"free","allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("p@example.com", tenant: tenant)
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
