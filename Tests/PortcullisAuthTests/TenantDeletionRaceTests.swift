import PortcullisCore
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth

/// A tenant's deletion racing the writes that make rows of the tenant: nothing the
/// tenant owned outlives it.
@Suite("Tenant deletion races")
struct TenantDeletionRaceTests {
    @Test("20 tenant-key creations racing the tenant's deletion: no live key outlives its tenant, every time")
    func keysRaceTenantDeletion() async throws {
        try await AuthHarness.run { harness in
            for _ in 0..<3 {
                let tenant = try await harness.createTenant()
                let outcomes = try await race(21) { index -> String? in
                    guard index < 20 else {
                        try await harness.tenantAdmin.delete(id: tenant, actor: "test")
                        return nil
                    }
                    return try await harness.adminKeys.create(displayName: "k\(index)", scope: .tenant(tenant), actor: "test").secret
                }
                #expect(outcomes[20].code == nil)
                #expect(Set(outcomes.codes().keys).isSubset(of: [.tenantNotFound]), "\(outcomes.codes())")
                for case .success(let secret?) in outcomes {
                    #expect(try await AdminServiceTests.principal(harness, secret: secret) == nil)
                }
                #expect(try await harness.count("SELECT count(*) FROM admin_keys WHERE tenant_id = \(tenant)") == 0)
            }
        }
    }

    @Test("20 sign-ups racing their tenant's deletion: nothing of the tenant outlives it — no user, session or signing key")
    func signUpsRaceTenantDeletion() async throws {
        try await AuthHarness.run { harness in
            for round in 0..<3 {
                let tenant = try await harness.createTenant()
                // Half the rounds start with the tenant's key made (a busy tenant), half without (its first requests).
                if round % 2 == 0 { _ = try await harness.signUp("first@example.com", tenant: tenant) }
                let outcomes = try await race(21) { index -> String? in
                    guard index < 20 else {
                        try await harness.tenantAdmin.delete(id: tenant, actor: "test")
                        return nil
                    }
                    return try await harness.signUp("user\(index)@example.com", tenant: tenant).user.uid
                }
                #expect(outcomes[20].code == nil)
                // USER_NOT_FOUND: the user was made, then went with its tenant before its session started.
                #expect(Set(outcomes.codes().keys).isSubset(of: [.tenantNotFound, .userNotFound]), "\(outcomes.codes())")
                for table in ["users", "refresh_sessions", "user_providers", "signing_keys"] {
                    let rows = try await harness.count("SELECT count(*) FROM \(unescaped: table) WHERE tenant_id = \(tenant)")
                    #expect(rows == 0, "\(table) of the deleted tenant")
                }
            }
        }
    }

    @Test("an instance that has not yet heard of a tenant's deletion writes nothing into it: no user, no signing key")
    func staleInstanceWritesNothing() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            // Another instance has the tenant cached; the deletion's NOTIFY has not reached it.
            let stale = harness.instance(clock: harness.clock)
            _ = try await stale.tenantCache.settings(tenant: TenantScope(tenant))
            try await harness.tenantAdmin.delete(id: tenant, actor: "test")

            await #expect(throws: AuthError(.tenantNotFound)) { try await stale.signUp("late@example.com", tenant: tenant) }
            await #expect(throws: Conflict.tenantMissing) {
                try await stale.adminAccounts.create(
                    tenant: TenantScope(tenant), uid: "late", email: nil, password: nil, emailVerified: false, profile: .init(),
                    disabled: false,
                    actor: "test")
            }
            // Its first key would be made by the JWKS or a token naming the tenant.
            await #expect(throws: AuthError(.tenantNotFound)) { try await stale.keyrings.keyring(tenant: TenantScope(tenant)) }
            for table in ["users", "user_providers", "signing_keys"] {
                let rows = try await harness.count("SELECT count(*) FROM \(unescaped: table) WHERE tenant_id = \(tenant)")
                #expect(rows == 0, "\(table) of the deleted tenant")
            }
        }
    }
}
