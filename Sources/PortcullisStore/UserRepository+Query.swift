import Foundation
import Logging
public import PortcullisCore
import PostgresNIO

/// The SQL of `accounts:query`: the accounts a ``UserQuery`` selects, sorted and sliced,
/// or their count.
extension UserRepository {
    /// The accounts `query` selects, sorted and sliced as it says (`accounts:query`).
    public func search(tenant: TenantScope, _ query: UserQuery) async throws -> [User] {
        let (uid, email, nobody) = Self.filterValues(query.filter)
        return try await database.withConnection { connection in
            // Each filter is a bound value; the planner drops the conditions whose value is NULL.
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM users
                WHERE tenant_id = \(tenant.key) AND NOT \(nobody)
                  AND (\(uid)::text IS NULL OR uid = \(uid))
                  AND (\(email)::text IS NULL OR (email IS NOT NULL AND lower(email) = \(email)))
                ORDER BY \(unescaped: Self.orderSQL(query))
                LIMIT \(query.limit) OFFSET \(query.offset)
                """, logger: logger)
            return try await Self.decode(rows, tenant: tenant).map(\.0)
        }
    }

    /// How many accounts `filter` selects (`accounts:query` with `returnUserInfo: false`).
    public func count(tenant: TenantScope, _ filter: UserQuery.Filter) async throws -> Int64 {
        let (uid, email, nobody) = Self.filterValues(filter)
        return try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT count(*) FROM users
                WHERE tenant_id = \(tenant.key) AND NOT \(nobody)
                  AND (\(uid)::text IS NULL OR uid = \(uid))
                  AND (\(email)::text IS NULL OR (email IS NOT NULL AND lower(email) = \(email)))
                """, logger: logger)
            for try await count in rows.decode(Int64.self) { return count }
            return 0
        }
    }

    private static func filterValues(_ filter: UserQuery.Filter) -> (uid: String?, email: String?, nobody: Bool) {
        switch filter {
        case .all: (nil, nil, false)
        case .uid(let uid): (uid, nil, false)
        case .email(let email): (nil, email, false)
        case .nobody: (nil, nil, true)
        }
    }

    /// The `ORDER BY` of a query, from fixed fragments only; the uid breaks ties, so the order is total.
    static func orderSQL(_ query: UserQuery) -> String {
        let direction = query.descending ? "DESC" : "ASC"
        let key: String? =
            switch query.sortBy {
            case .userId: nil
            case .name: "display_name"
            case .createdAt: "created_at"
            case .lastLoginAt: "last_login_us"
            case .email: "lower(email)"
            }
        guard let key else { return "uid \(direction)" }
        return "\(key) \(direction) NULLS LAST, uid \(direction)"
    }
}
