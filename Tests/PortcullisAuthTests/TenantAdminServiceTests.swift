import PortcullisCore
import PortcullisCrypto
import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// `TenantAdminService`: update masks, validation before any write, and this
/// instance's cache following its own writes at once.
@Suite("Tenant admin service")
struct TenantAdminServiceTests {
    @Test("an update changes only the masked fields and the very next request of this instance sees it")
    func maskedUpdate() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant(
                #"{"displayName":"m","allowPasswordSignup":true,"enableAnonymousUser":true,"idTokenLifetimeSeconds":600}"#)
            // Cached before the change: the service must replace the cached copy itself.
            #expect(try await harness.tenantCache.settings(tenant: TenantScope(tenant)).enableAnonymousUser)
            let body = try json(
                #"{"displayName":"ignored","allowPasswordSignup":false,"enableAnonymousUser":false,"recentLoginWindowSeconds":60}"#)
            let updated = try await harness.tenantAdmin.update(
                id: tenant, body: body, updateMask: "enableAnonymousUser,recent_login_window_seconds", scope: .project, actor: "test")
            #expect(updated.version == 2)
            for settings in [updated.settings, try await harness.tenantCache.settings(tenant: TenantScope(tenant))] {
                #expect(settings.displayName == "m" && settings.allowPasswordSignup && settings.idTokenLifetimeSeconds == 600)
                #expect(!settings.enableAnonymousUser && settings.recentLoginWindowSeconds == 60)
            }
            let anonymous = await #expect(throws: AuthError.self) {
                try await harness.accounts.signUp(tenantId: tenant, email: nil, password: nil, profile: .init(), idToken: nil, client: nil)
            }
            #expect(anonymous?.code == .adminOnlyOperation)

            // An empty mask replaces the whole resource: every field not in the body is back to its default.
            let replaced = try await harness.tenantAdmin.update(
                id: tenant, body: try json(#"{"displayName":"whole"}"#), updateMask: nil, scope: .project, actor: "test")
            #expect(replaced.settings.displayName == "whole" && !replaced.settings.allowPasswordSignup)
            #expect(replaced.settings.idTokenLifetimeSeconds == 3600 && replaced.settings.recentLoginWindowSeconds == 300)
        }
    }

    @Test("a bad value is refused before anything is written, inside the mask or outside it; an unknown path too")
    func validationFirst() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let refused: [(String, String?)] = [
                (#"{"idTokenLifetimeSeconds":0}"#, "idTokenLifetimeSeconds"),
                (#"{"displayName":"x","idTokenLifetimeSeconds":"soon"}"#, "displayName"),
                (#"{"displayName":"x"}"#, "displayName,nope"),
                (#"{"displayName":"x"}"#, "name"),
            ]
            for (body, mask) in refused {
                // A body that cannot be read is a `JSONInputError`, which the wire answers like an AuthError.
                let error = await #expect(throws: (any Error).self, "\(body) \(mask ?? "")") {
                    try await harness.tenantAdmin.update(id: tenant, body: try json(body), updateMask: mask, scope: .project, actor: "test")
                }
                #expect(error.map { AuthError(translating: $0, logger: TestDatabase.logger).code } == .invalidArgument)
            }
            let missing = await #expect(throws: AuthError.self) {
                try await harness.tenantAdmin.update(
                    id: "no-such-tenant", body: try json("{}"), updateMask: nil, scope: .project, actor: "test")
            }
            #expect(missing?.code == .tenantNotFound)
            let stored = try await harness.tenantAdmin.get(id: tenant)
            #expect(stored.version == 1 && stored.settings.displayName == "t")
            let audit = AuditLogRepository(database: harness.database, logger: TestDatabase.logger)
            #expect(try await audit.list(ofTenant: tenant, beforeId: nil, limit: 10).map(\.action) == ["tenant.create"])
        }
    }

    @Test("project config: defaults at version 0 until first changed; masks as for a tenant; the cache follows")
    func projectConfig() async throws {
        try await AuthHarness.run { harness in
            let initial = try await harness.tenantAdmin.projectConfig()
            #expect(initial.version == 0 && initial.settings == TenantSettings())
            #expect(try await !harness.tenantCache.settings(tenant: .project).allowPasswordSignup)
            let body = try json(#"{"allowPasswordSignup":true,"displayName":"ignored"}"#)
            let first = try await harness.tenantAdmin.updateProjectConfig(body: body, updateMask: "allowPasswordSignup", actor: "test")
            #expect(first.version == 1 && first.settings.allowPasswordSignup && first.settings.displayName == nil)
            // Project users sign up under the new settings at once.
            let user = try await harness.signUp("project@example.com", tenant: nil)
            #expect(user.user.tenantId == nil)
            let claims = try await harness.tokens.verifyIDToken(user.tokens.idToken)
            #expect(claims.tenantId == nil && claims.issuer == "http://localhost/\(AuthHarness.projectId)")
            let second = try await harness.tenantAdmin.updateProjectConfig(
                body: try json(#"{"refreshTokenReuseGraceSeconds":0}"#), updateMask: "refreshTokenReuseGraceSeconds", actor: "test")
            #expect(second.version == 2 && second.settings.allowPasswordSignup && second.settings.refreshTokenReuseGraceSeconds == 0)
            #expect(try await harness.tenantCache.settings(tenant: .project) == second.settings)
        }
    }
}
