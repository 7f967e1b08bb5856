import Foundation
import Logging
public import PortcullisCore
import PostgresNIO

/// The SQL of `accounts:query`: the accounts a ``UserQuery`` selects, sorted and sliced,
/// or their count.
extension UserRepository {
    /// The accounts `query` selects, sorted and sliced as it says (`accounts:query`).
    public func search(tenant: TenantScope, _ query: UserQuery) async throws -> [User] {
        guard let statement = Self.searchStatement(tenant: tenant, query) else { return [] }
        return try await database.withConnection { connection in
            let page = try await Self.decode(try await connection.query(statement, logger: logger), tenant: tenant).map(\.0)
            guard query.filter == .all, query.sortBy == .email, page.count < query.limit else { return page }
            // Sorted by email, the users without one follow those with one: the page goes on
            // with them, skipping as many as the offset reaches past the others.
            var skipped = 0
            if page.isEmpty, query.offset > 0 {
                let counted = try await connection.query(
                    "SELECT count(*) FROM users WHERE tenant_id = \(tenant.key) AND email IS NOT NULL", logger: logger)
                for try await withEmail in counted.decode(Int64.self) { skipped = max(0, query.offset - Int(clamping: withEmail)) }
            }
            let rest = Self.withoutEmailStatement(
                tenant: tenant, descending: query.descending, limit: query.limit - page.count, offset: skipped)
            return page + (try await Self.decode(try await connection.query(rest, logger: logger), tenant: tenant).map(\.0))
        }
    }

    /// The statement of ``search(tenant:_:)`` (`nil`: it selects nobody). The page's bounds
    /// are written into it, not bound: they are integers, and the pool's generic plans cost a
    /// bound `LIMIT` as a tenth of the tenant, which at millions of users sorts them all
    /// rather than reading the first page from an index. A uid or an email selects one
    /// account at most, so it has no order to keep: with one, a known `LIMIT` would make
    /// walking the primary key in uid order until the account turns up look cheap, and at
    /// millions of users an email query did that for seconds.
    ///
    /// Sorted by email, it selects the users with one, in their unique index's order, and
    /// ``withoutEmailStatement(tenant:descending:limit:offset:)`` the rest: one order for
    /// both, `lower(email) NULLS LAST`, matches no index, and sorted the whole tenant.
    static func searchStatement(tenant: TenantScope, _ query: UserQuery) -> PostgresQuery? {
        guard let (condition, bindings) = selection(tenant: tenant, query.filter) else { return nil }
        let withEmail = query.sortBy == .email ? "AND email IS NOT NULL " : ""
        let order = query.filter == .all ? "\(withEmail)ORDER BY \(orderSQL(query)) " : ""
        return PostgresQuery(
            unsafeSQL: """
                SELECT \(columns) FROM users WHERE \(condition)
                \(order)LIMIT \(query.limit) OFFSET \(query.offset)
                """, binds: bindings)
    }

    /// The users without an email in uid order (`users_without_email`), `limit` of them after
    /// `offset`: the end of a query sorted by email, in either direction.
    static func withoutEmailStatement(tenant: TenantScope, descending: Bool, limit: Int, offset: Int) -> PostgresQuery {
        var bindings = PostgresBindings()
        bindings.append(tenant.key)
        return PostgresQuery(
            unsafeSQL: """
                SELECT \(columns) FROM users WHERE tenant_id = $1 AND email IS NULL
                ORDER BY uid \(descending ? "DESC" : "ASC") LIMIT \(limit) OFFSET \(offset)
                """, binds: bindings)
    }

    /// How many accounts `filter` selects (`accounts:query` with `returnUserInfo: false`).
    public func count(tenant: TenantScope, _ filter: UserQuery.Filter) async throws -> Int64 {
        guard let (condition, bindings) = Self.selection(tenant: tenant, filter) else { return 0 }
        let statement = PostgresQuery(unsafeSQL: "SELECT count(*) FROM users WHERE \(condition)", binds: bindings)
        return try await database.withConnection { connection in
            for try await count in try await connection.query(statement, logger: logger).decode(Int64.self) { return count }
            return 0
        }
    }

    /// The `WHERE` of `filter` in `tenant`, from fixed fragments with each value bound (`nil`:
    /// it selects nobody). One statement per kind of filter, not one for all with
    /// `$n IS NULL OR …` per value: the pool forces generic plans, which keep those
    /// conditions, so a query for one email walked the tenant's whole primary key in uid order
    /// (10,000,000 users: past the request timeout; BENCHMARKS.md).
    private static func selection(tenant: TenantScope, _ filter: UserQuery.Filter) -> (String, PostgresBindings)? {
        var bindings = PostgresBindings()
        bindings.append(tenant.key)
        switch filter {
        case .all:
            return ("tenant_id = $1", bindings)
        case .uid(let uid):
            bindings.append(uid)
            return ("tenant_id = $1 AND uid = $2", bindings)
        case .email(let email):
            bindings.append(email)
            return ("tenant_id = $1 AND email IS NOT NULL AND lower(email) = $2", bindings)
        case .nobody:
            return nil
        }
    }

    /// The `ORDER BY` of a query over every user, from fixed fragments only; the uid breaks
    /// ties, so the order is total. Sorted by email, it orders only the users with one, whose
    /// emails are unique (``searchStatement(tenant:_:)``).
    static func orderSQL(_ query: UserQuery) -> String {
        let direction = query.descending ? "DESC" : "ASC"
        let nullable: String
        switch query.sortBy {
        case .userId: return "uid \(direction)"
        // Never null, so no `NULLS LAST`: the index on (tenant_id, created_at, uid) then gives
        // either direction in order, read forwards or backwards.
        case .createdAt: return "created_at \(direction), uid \(direction)"
        case .name: nullable = "display_name"
        case .lastLoginAt: nullable = "last_login_us"
        case .email: return "lower(email) \(direction)"
        }
        return "\(nullable) \(direction) NULLS LAST, uid \(direction)"
    }
}
