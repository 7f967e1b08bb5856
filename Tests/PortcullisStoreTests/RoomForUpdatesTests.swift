import PortcullisCore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisStore

@Suite("Room for updates on the pages of users and sessions")
struct RoomForUpdatesTests {
    @Test("a sign-in's or a refresh's update of a row on a page filled by inserts stays on that page (HOT): no index entry is written")
    func updatesStayOnTheirPage() async throws {
        try await TestDatabase.withDatabase { database in
            let tenant = TenantScope("t-room")
            let counts = try await database.withTransaction { transaction in
                // Rows the size of real ones (an scrypt hash, a profile), inserted in one go as
                // sign-ups and `COPY` fill pages; then the first row of every page is updated
                // as a refresh updates its user and its session. One transaction, so that its
                // own statistics count the updates.
                try await transaction.query(
                    """
                    INSERT INTO users (tenant_id, uid, email, display_name, password_hash, created_at)
                    SELECT \(tenant.key), 'user-' || md5(g::text), 'user' || g || '@example.com', 'User ' || g,
                           '$scrypt$ln=14,r=8,p=1$' || md5(g::text) || '$' || md5(g::text) || md5(g::text), now()
                    FROM generate_series(1, 2000) g
                    """, logger: TestDatabase.logger)
                try await transaction.query(
                    """
                    INSERT INTO refresh_sessions (tenant_id, session_id, uid, token_hash, issued_at, sign_in_provider, started_us)
                    SELECT \(tenant.key), md5('s' || g), 'user-' || md5(g::text), sha256(g::text::bytea), 0, 'password', 0
                    FROM generate_series(1, 2000) g
                    """, logger: TestDatabase.logger)
                try await transaction.query(
                    """
                    UPDATE users SET last_refresh_at = now(), last_login_us = 1
                    WHERE tenant_id = \(tenant.key) AND (ctid::text::point)[1] = 1
                    """, logger: TestDatabase.logger)
                try await transaction.query(
                    """
                    UPDATE refresh_sessions SET previous_hash = token_hash, token_hash = sha256(token_hash), issued_at = 1
                    WHERE tenant_id = \(tenant.key) AND (ctid::text::point)[1] = 1
                    """, logger: TestDatabase.logger)
                var counts: [String: [Int]] = [:]
                for table in ["users", "refresh_sessions"] {
                    let rows = try await transaction.query(
                        """
                        SELECT pg_stat_get_xact_tuples_updated(\(table)::regclass), pg_stat_get_xact_tuples_hot_updated(\(table)::regclass)
                        """, logger: TestDatabase.logger)
                    for try await (updated, hot) in rows.decode((Int, Int).self) { counts[table] = [updated, hot] }
                }
                return counts
            }
            for table in ["users", "refresh_sessions"] {
                let figures = try #require(counts[table])
                // Tens of pages, each one's first row updated, and every update on its own page.
                #expect(figures[0] >= 20 && figures[1] == figures[0], "\(table): \(figures[1]) of \(figures[0]) updates HOT")
            }
        }
    }
}
