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

/// What a tenant's and the project's settings change for end users: scrypt parameters, errors, self-service switches.
extension AccountTests {
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
            // Naming no tenant means the token's (the official JS SDK names none on lookup).
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)]).status == .ok)

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
}

extension AccountTests {
    @Test(
        "disableAuth: every end-user endpoint answers PROJECT_DISABLED, also for a session signed in before, whatever else the request says"
    )
    func disabledTenantRefusesEveryEndUserEndpoint() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"off","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("in@example.com", tenant: tenant)
            try await gateway.patchTenant(tenant, mask: "disableAuth", #"{"disableAuth":true}"#)
            let idToken = JSONValue.string(session.idToken)
            // With the body's tenantId, and (for calls that carry an ID token) without it: the token's tenant.
            let calls: [(String, [String: JSONValue], Bool)] = [
                ("accounts:signUp", ["email": "new@example.com", "password": "secret1"], true),
                ("accounts:signUp", [:], true),
                ("accounts:signUp", ["idToken": idToken, "email": "up@example.com", "password": "secret1"], false),
                ("accounts:signInWithPassword", ["email": "in@example.com", "password": "correct horse"], true),
                ("accounts:signInWithIdp", ["postBody": "providerId=google.com&id_token=x", "requestUri": "http://localhost"], true),
                ("accounts:signInWithIdp", ["postBody": "providerId=google.com&id_token=x", "idToken": idToken], false),
                ("accounts:signInWithCustomToken", ["token": "a.b.c"], true),
                ("accounts:lookup", ["idToken": idToken], false),
                ("accounts:update", ["idToken": idToken, "displayName": "n"], false),
                ("accounts:delete", ["idToken": idToken], false),
                ("accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "in@example.com"], true),
                ("accounts:sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": idToken], false),
                ("accounts:resetPassword", ["oobCode": "x"], true),
                ("accounts:update", ["oobCode": "x"], true),
                ("accounts:createAuthUri", ["identifier": "in@example.com", "continueUri": "http://localhost"], true),
            ]
            for (operation, body, namesTenant) in calls {
                try await gateway.endUser(operation, body, tenant: namesTenant ? tenant : nil)
                    .expectEnvelope(.badRequest, "PROJECT_DISABLED")
            }
            try await gateway.refresh(session.refreshToken).expectEnvelope(.badRequest, "PROJECT_DISABLED")
            let policy = try await gateway.client.execute(
                uri: "/v2/passwordPolicy?key=\(TestGateway.apiKey)&tenantId=\(tenant)", method: .get, headers: [:], body: nil)
            policy.expectEnvelope(.badRequest, "PROJECT_DISABLED")
        }
    }
}
