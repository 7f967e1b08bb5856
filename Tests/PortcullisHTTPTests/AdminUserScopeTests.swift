import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

/// Who may manage whose users: tenant-scoped keys, the tenant in the path, and the Admin
/// SDKs' emulator credential (`portcullis dev` only).
@Suite("Admin user management scopes")
struct AdminUserScopeTests {
    @Test("a tenant key manages its own tenant's users only: every operation on another tenant or the project is 403")
    func tenantKeyStaysInItsTenant() async throws {
        try await TestGateway.run { gateway in
            let mine = try await gateway.createTenant()
            let theirs = try await gateway.createTenant()
            let key = try await gateway.key(.tenant(mine))
            let victim = try await gateway.createUser(#"{"localId":"victim","email":"victim@example.com"}"#, tenant: theirs)
            let projectUser = try await gateway.createUser(#"{"localId":"victim","email":"victim@example.com"}"#, tenant: nil)
            #expect(victim == projectUser, "the same uid in two scopes")

            let operations: [(String, String)] = [
                ("", #"{"localId":"intruder"}"#), (":lookup", #"{"localId":["victim"]}"#),
                (":update", #"{"localId":"victim","disableUser":true}"#), (":delete", #"{"localId":"victim"}"#),
                (":batchDelete", #"{"localIds":["victim"],"force":true}"#), (":query", "{}"),
            ]
            for target in [theirs, nil] as [String?] {
                for (operation, json) in operations {
                    try await gateway.admin(operation, tenant: target, json, key: key)
                        .expectEnvelope(.forbidden, "PERMISSION_DENIED")
                }
                try await gateway.batchGet(tenant: target, "", key: key).expectEnvelope(.forbidden, "PERMISSION_DENIED")
            }
            // Nothing changed in either scope.
            for target in [theirs, nil] as [String?] {
                let user = try #require(try await gateway.adminUser("victim", tenant: target))
                #expect(user.value(at: ["disabled"]) == .bool(false))
            }
            #expect(try await gateway.adminUser("intruder", tenant: theirs) == nil)

            // Its own tenant works with the same key.
            #expect(try await gateway.admin("", tenant: mine, #"{"localId":"own"}"#, key: key).status == .ok)
            #expect(try await gateway.batchGet(tenant: mine, "", key: key).status == .ok)
        }
    }

    @Test("a tenant path sees and changes only that tenant's users, never the project's of the same uid or email")
    func tenantPathIsolation() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            try await gateway.createUser(#"{"localId":"shared","email":"shared@example.com"}"#, tenant: nil)
            try await gateway.createUser(#"{"localId":"project-only","email":"project@example.com"}"#, tenant: nil)

            #expect(try await gateway.adminUser("shared", tenant: tenant) == nil)
            let byEmail = try await gateway.admin(":lookup", tenant: tenant, #"{"email":["project@example.com"]}"#).json()
            #expect(byEmail.value(at: ["users"]) == nil)
            try await gateway.admin(":update", tenant: tenant, #"{"localId":"shared","disableUser":true}"#)
                .expectEnvelope(.badRequest, "USER_NOT_FOUND")
            try await gateway.admin(":delete", tenant: tenant, #"{"localId":"shared"}"#).expectEnvelope(.badRequest, "USER_NOT_FOUND")
            #expect(try await gateway.admin(":batchDelete", tenant: tenant, #"{"localIds":["shared"],"force":true}"#).status == .ok)
            #expect(try await gateway.batchGet(tenant: tenant, "").json().list(at: ["users"]).isEmpty)
            #expect(try await gateway.admin(":query", tenant: tenant, "{}").json().string(at: ["recordsCount"]) == "0")
            // The same uid and email are free in the tenant.
            try await gateway.createUser(#"{"localId":"shared","email":"shared@example.com"}"#, tenant: tenant)

            let project = try #require(try await gateway.adminUser("shared", tenant: nil))
            #expect(project.value(at: ["disabled"]) == .bool(false) && project.value(at: ["tenantId"]) == nil)
            let projectPage = try await gateway.batchGet(tenant: nil, "").json().list(at: ["users"])
            #expect(projectPage.compactMap { $0.string(at: ["localId"]) } == ["project-only", "shared"])
            #expect(try await gateway.adminUser("shared", tenant: tenant)?.string(at: ["tenantId"]) == tenant)

            // An unknown tenant is the path's resource missing.
            try await gateway.admin(":lookup", tenant: "nowhere-a1b2c", #"{"localId":["shared"]}"#)
                .expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            try await gateway.batchGet(tenant: "nowhere-a1b2c", "").expectEnvelope(.notFound, "TENANT_NOT_FOUND")
        }
    }

    @Test("`Bearer owner` (the Admin SDKs' emulator credential) is a project key only when the flag is on")
    func emulatorCredential() async throws {
        try await TestGateway.run { gateway in
            try await gateway.admin("", tenant: nil, #"{"localId":"x"}"#, key: "owner").expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            try await gateway.batchGet(tenant: nil, "", key: "owner").expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            try await gateway.send(.get, gateway.tenants, key: "owner").expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            #expect(try await gateway.adminUser("x", tenant: nil) == nil)
        }
        try await TestGateway.run(configure: { $0.acceptsEmulatorAdminCredential = true }) { gateway in
            let tenant = try await gateway.createTenant()
            #expect(try await gateway.admin("", tenant: nil, #"{"localId":"x"}"#, key: "owner").status == .ok)
            #expect(try await gateway.admin("", tenant: tenant, #"{"localId":"y"}"#, key: "owner").status == .ok)
            #expect(try await gateway.send(.get, gateway.tenants, key: "owner").status == .ok)
            // Other bearer values are still checked as keys, and the project must still be this one.
            try await gateway.admin("", tenant: nil, #"{"localId":"z"}"#, key: "owners").expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            try await gateway.send(.post, "/v1/projects/other-project/accounts", json: "{}", key: "owner")
                .expectEnvelope(.notFound, "PROJECT_NOT_FOUND")
            let events = try await gateway.send(.get, "\(gateway.tenants)/\(tenant)/auditEvents").json().list(at: ["auditEvents"])
            #expect(events.first?.string(at: ["actor"]) == "adminKey:emulator-owner")
        }
    }
}
