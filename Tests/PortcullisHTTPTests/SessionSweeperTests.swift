import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("Sweeping dead refresh sessions")
struct SessionSweeperTests {
    @Test("revoked sessions and sessions before validSince go once past the retention; live and recent ones stay")
    func sweepsOnlyDeadSessionsPastRetention() async throws {
        try await TestGateway.run { gateway in
            let database = gateway.server.database
            let tenant = try await gateway.createTenant(#"{"displayName":"sweep","allowPasswordSignup":true}"#)
            let revokedOld = try await gateway.signUp("alice@example.com", tenant: tenant)
            let live = try await gateway.signIn("alice@example.com", tenant: tenant)
            let revokedRecent = try await gateway.signIn("alice@example.com", tenant: tenant)
            let beforeValidSince = try await gateway.signUp("bob@example.com", tenant: tenant)
            func id(_ session: Session) -> String { String(session.refreshToken.split(separator: ".")[2]) }
            func run(_ query: PostgresQuery) async throws {
                for try await _ in try await database.client.query(query) {}
            }

            // 40 days ago for everything but one of Alice's sessions; then the states to sweep.
            let past: Int64 = 40 * 86_400
            try await run("UPDATE users SET valid_since_us = valid_since_us - \(past * 1_000_000) WHERE tenant_id = \(tenant)")
            try await run(
                "UPDATE refresh_sessions SET issued_at = issued_at - \(past) WHERE tenant_id = \(tenant) AND session_id <> \(id(revokedRecent))"
            )
            try await run(
                "UPDATE refresh_sessions SET revoked = true WHERE tenant_id = \(tenant) AND session_id IN (\(id(revokedOld)), \(id(revokedRecent)))"
            )
            try await run(
                "UPDATE users SET valid_since_us = (extract(epoch FROM now()) * 1000000)::int8 WHERE tenant_id = \(tenant) AND uid = \(beforeValidSince.uid)"
            )

            // A batch of one, so the pass has to loop.
            let sweeper = SessionSweeper(
                sessions: RefreshSessionRepository(database: database, logger: TestDatabase.logger), batchSize: 1,
                schema: SchemaGate(), logger: TestDatabase.logger)
            #expect(await sweeper.sweep(now: Int64(Date().timeIntervalSince1970)) == 2)

            var remaining: Set<String> = []
            let rows = try await database.client.query("SELECT session_id FROM refresh_sessions WHERE tenant_id = \(tenant)")
            for try await sessionId in rows.decode(String.self) { remaining.insert(sessionId) }
            #expect(remaining == [id(live), id(revokedRecent)])
            #expect(try await gateway.refresh(live.refreshToken).status == .ok)
            // A swept session's token is simply unknown now.
            try await gateway.refresh(revokedOld.refreshToken).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            #expect(await sweeper.sweep(now: Int64(Date().timeIntervalSince1970)) == 0)
        }
    }
}
