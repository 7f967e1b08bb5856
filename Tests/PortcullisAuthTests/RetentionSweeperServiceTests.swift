import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth

/// `RetentionSweeper`'s sessions by the clock: a dead session (revoked, or started before its user's
/// `validSince`) goes once its last rotation is older than the retention; a live one
/// never goes, however old.
@Suite("Retention sweeper service")
struct RetentionSweeperServiceTests {
    static let retention: Int64 = 30 * 86_400

    static func sweeper(_ harness: AuthHarness) -> RetentionSweeper {
        // A batch of one: a pass has to loop to delete more than one.
        harness.sweeper(retention: .seconds(retention), batchSize: 1)
    }

    /// The session ids still stored for `tenant`.
    static func stored(_ harness: AuthHarness, tenant: String) async throws -> Set<String> {
        var ids: Set<String> = []
        let rows = try await harness.database.pool().client.query("SELECT session_id FROM refresh_sessions WHERE tenant_id = \(tenant)")
        for try await id in rows.decode(String.self) { ids.insert(id) }
        return ids
    }

    static func id(_ refreshToken: String) throws -> String {
        try #require(RefreshToken(parsing: refreshToken)).sessionId
    }

    @Test("a pass walks every tenant's sessions range by range: the dead ones go wherever they sort, the live ones stay")
    func walksAcrossTenants() async throws {
        try await AuthHarness.run { harness in
            var kept: [String: Set<String>] = [:]
            for index in 0..<3 {
                let tenant = try await harness.createTenant()
                let live = try await harness.signUp("live\(index)@example.com", tenant: tenant)
                let dead = try await harness.signUp("dead\(index)@example.com", tenant: tenant)
                _ = try await harness.adminAccounts.update(
                    tenant: TenantScope(tenant), uid: dead.user.uid, .init(disabled: true), actor: "test")
                kept[tenant] = [try Self.id(live.tokens.refreshToken)]
            }
            harness.clock.advance(seconds: Self.retention + 1)
            // A range of one session a statement: the pass crosses every boundary between tenants.
            #expect(await Self.sweeper(harness).sweep(now: harness.clock.now()).sessions == 3)
            for (tenant, live) in kept {
                #expect(try await Self.stored(harness, tenant: tenant) == live)
            }
        }
    }

    @Test("dead sessions go one retention after their last rotation, to the second; live ones stay, however old")
    func sweepsOnlyExpiredDeadSessions() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let start = harness.clock.now()
            let sweeper = Self.sweeper(harness)
            // Live since the start and never refreshed.
            let live = try await harness.signUp("live@example.com", tenant: tenant)
            // Revoked by reuse: rotated at the start, its first token replayed after the grace window.
            let reused = try await harness.signUp("reused@example.com", tenant: tenant)
            _ = try await harness.tokens.refresh(reused.tokens.refreshToken)
            harness.clock.advance(seconds: 11)
            await #expect(throws: AuthError(.invalidRefreshToken)) { try await harness.tokens.refresh(reused.tokens.refreshToken) }
            // Started before a password change (at +12): dead; the change's own session is live.
            let replaced = try await harness.signUp("replaced@example.com", tenant: tenant)
            harness.clock.advance(seconds: 1)
            let (_, renewedTokens) = try await harness.accounts.update(
                idToken: replaced.tokens.idToken, tenantId: tenant, changes: .init(password: "a new secret"))
            let renewed = try #require(renewedTokens)
            // Dead since day 25: the user was disabled.
            harness.clock.set(start.adding(seconds: 25 * 86_400))
            let late = try await harness.signUp("late@example.com", tenant: tenant)
            _ = try await harness.adminAccounts.update(
                tenant: TenantScope(tenant), uid: late.user.uid, .init(disabled: true), actor: "test")
            let all = try await Self.stored(harness, tenant: tenant)
            #expect(all.count == 5)

            // One retention after the reuse's rotation (at the start) and the replaced session's sign-in (+11).
            harness.clock.set(start.adding(seconds: Self.retention + 11))
            await #expect(throws: AuthError(.tokenExpired)) { try await harness.tokens.refresh(replaced.tokens.refreshToken) }
            #expect(await sweeper.sweep(now: harness.clock.now()).sessions == 1)
            #expect(try await Self.stored(harness, tenant: tenant) == all.subtracting([try Self.id(reused.tokens.refreshToken)]))
            harness.clock.advance(seconds: 1)
            #expect(await sweeper.sweep(now: harness.clock.now()).sessions == 1)
            // A swept session's token is unknown now, no longer TOKEN_EXPIRED.
            await #expect(throws: AuthError(.invalidRefreshToken)) { try await harness.tokens.refresh(replaced.tokens.refreshToken) }
            #expect(await sweeper.sweep(now: harness.clock.now()).sessions == 0)

            // The disabled user's session goes one retention after day 25; the live ones stay.
            harness.clock.set(start.adding(seconds: 25 * 86_400 + Self.retention))
            #expect(await sweeper.sweep(now: harness.clock.now()).sessions == 0)
            harness.clock.advance(seconds: 1)
            #expect(await sweeper.sweep(now: harness.clock.now()).sessions == 1)
            #expect(
                try await Self.stored(harness, tenant: tenant)
                    == [try Self.id(live.tokens.refreshToken), try Self.id(renewed.refreshToken)])
            _ = try await harness.tokens.refresh(live.tokens.refreshToken)
            _ = try await harness.tokens.refresh(renewed.refreshToken)
        }
    }
}
