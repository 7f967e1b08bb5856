import Foundation
import PortcullisCore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisStore

@Suite("accounts:query's statements")
struct UserQueryPlanTests {
    @Test("a uid or an email selects one account at most, through its index, with no order a plan could walk instead")
    func uniqueFiltersUnordered() async throws {
        try await TestDatabase.withDatabase { database in
            let tenant = TenantScope("t-unique")
            let users = UserRepository(database: database, logger: TestDatabase.logger)
            try await database.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO users (tenant_id, uid, email)
                    SELECT \(tenant.key), 'u' || g, 'user' || g || '@example.com' FROM generate_series(1, 50) g
                    """, logger: TestDatabase.logger)
            }
            for filter in [UserQuery.Filter.uid("u7"), .email("user7@example.com")] {
                let query = UserQuery(filter: filter, sortBy: .createdAt, descending: true, limit: 20)
                let statement = try #require(UserRepository.searchStatement(tenant: tenant, query))
                // The accounts' own order, not their providers' (in the column list).
                let outer = statement.sql.components(separatedBy: "FROM users WHERE").last ?? ""
                #expect(!outer.contains("ORDER BY"), "\(statement.sql)")
                #expect(try await users.search(tenant: tenant, query).map(\.uid) == ["u7"])
                // The page's bounds still hold: past the one account there is none.
                #expect(try await users.search(tenant: tenant, UserQuery(filter: filter, offset: 1, limit: 20)).isEmpty)
            }
        }
    }

    @Test("sorted by creation time, either way, a page is read in order from an index, never sorted", arguments: [false, true])
    func createdAtFromIndex(descending: Bool) async throws {
        try await TestDatabase.withDatabase { database in
            let tenant = TenantScope("t-plan")
            try await database.withConnection { connection in
                // Creation times out of uid order, each one twice (the uid breaks the tie).
                try await connection.query(
                    """
                    INSERT INTO users (tenant_id, uid, created_at)
                    SELECT \(tenant.key), 'u' || g, timestamptz '2026-01-01' + ((g * 37) % 100) * interval '1 minute'
                    FROM generate_series(1, 200) g
                    """, logger: TestDatabase.logger)
            }
            let query = UserQuery(sortBy: .createdAt, descending: descending, offset: 3, limit: 20)
            let statement = try #require(UserRepository.searchStatement(tenant: tenant, query))
            let plan = try await Self.unsortedPlan(of: [statement], in: database)
            #expect(plan.contains("users_created_at") && !plan.contains("Sort"), "\(plan)")

            let users = try await UserRepository(database: database, logger: TestDatabase.logger).search(tenant: tenant, query)
            // The same page as PostgreSQL orders it with no index in question.
            let order = descending ? "DESC" : "ASC"
            let expected = try await Self.strings(
                """
                SELECT uid FROM users WHERE tenant_id = \(tenant.key)
                ORDER BY created_at \(unescaped: order), uid \(unescaped: order) LIMIT 20 OFFSET 3
                """, in: database)
            #expect(users.map(\.uid) == expected && expected.count == 20)
        }
    }

    @Test(
        "sorted by email, either way, the users with one come from the email index and then those without from theirs, never sorted",
        arguments: [false, true])
    func emailFromIndexes(descending: Bool) async throws {
        try await TestDatabase.withDatabase { database in
            let tenant = TenantScope("t-email")
            try await database.withConnection { connection in
                // Thirty emails out of uid order, and ten users without one.
                try await connection.query(
                    """
                    INSERT INTO users (tenant_id, uid, email)
                    SELECT \(tenant.key), 'u' || g, CASE WHEN g <= 30 THEN 'e' || ((g * 7) % 31) || '@example.com' END
                    FROM generate_series(1, 40) g
                    """, logger: TestDatabase.logger)
            }
            let withEmail = UserRepository.searchStatement(tenant: tenant, UserQuery(sortBy: .email, descending: descending, limit: 20))
            let withoutEmail = UserRepository.withoutEmailStatement(tenant: tenant, descending: descending, limit: 20, offset: 3)
            let plan = try await Self.unsortedPlan(of: [try #require(withEmail), withoutEmail], in: database)
            #expect(plan.contains("users_email_unique") && plan.contains("users_without_email") && !plan.contains("Sort"), "\(plan)")

            // Every page, inside either part, across the boundary, past it and past the end, as
            // PostgreSQL orders the whole tenant with no index in question.
            let order = descending ? "DESC" : "ASC"
            let expected = try await Self.strings(
                """
                SELECT uid FROM users WHERE tenant_id = \(tenant.key)
                ORDER BY lower(email) \(unescaped: order) NULLS LAST, uid \(unescaped: order)
                """, in: database)
            let users = UserRepository(database: database, logger: TestDatabase.logger)
            for (offset, limit) in [(0, 25), (25, 10), (30, 5), (33, 10), (45, 5)] {
                let page = try await users.search(
                    tenant: tenant, UserQuery(sortBy: .email, descending: descending, offset: offset, limit: limit))
                #expect(page.map(\.uid) == Array(expected.dropFirst(offset).prefix(limit)), "offset \(offset), limit \(limit)")
            }
        }
    }

    /// The plans of `statements`, sorts forbidden: a table this small is cheaper to sort, and
    /// forbidding sorts shows whether an index can give the order.
    private static func unsortedPlan(of statements: [PostgresQuery], in database: Database) async throws -> String {
        try await database.withConnection { connection in
            try await connection.query("SET enable_sort = off", logger: TestDatabase.logger)
            var lines: [String] = []
            for statement in statements {
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN " + statement.sql, binds: statement.binds), logger: TestDatabase.logger)
                for try await line in rows.decode(String.self) { lines.append(line) }
            }
            return lines.joined(separator: "\n")
        }
    }

    /// The first column of `query`'s rows.
    private static func strings(_ query: PostgresQuery, in database: Database) async throws -> [String] {
        try await database.withConnection { connection in
            var values: [String] = []
            for try await value in try await connection.query(query, logger: TestDatabase.logger).decode(String.self) {
                values.append(value)
            }
            return values
        }
    }
}
