import Foundation
import Logging
public import PortcullisCore
import PostgresNIO

/// The admin API's lookups of accounts by several identifiers (`accounts:lookup`).
extension UserRepository {
    /// The accounts any of the identifiers name, each once, ordered by uid. Emails match
    /// case-insensitively; identities by provider and raw id.
    public func lookup(
        tenant: TenantScope, uids: [String], emails: [String], federatedIds: [FederatedUserId]
    ) async throws -> [User] {
        let lowered = emails.map { $0.lowercased() }
        return try await database.withConnection { connection in
            // Three index lookups (primary key, email index, provider key) united, then the rows.
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM users
                WHERE tenant_id = \(tenant.key) AND uid IN (
                    SELECT unnest(\(uids)::text[])
                    UNION
                    SELECT u.uid FROM users u
                    WHERE u.tenant_id = \(tenant.key) AND u.email IS NOT NULL AND lower(u.email) = ANY(\(lowered)::text[])
                    UNION
                    SELECT p.uid FROM user_providers p
                    JOIN unnest(\(federatedIds.map(\.providerId))::text[], \(federatedIds.map(\.rawId))::text[])
                        AS f(provider_id, federated_id)
                        ON p.provider_id = f.provider_id AND p.federated_id = f.federated_id
                    WHERE p.tenant_id = \(tenant.key))
                ORDER BY uid
                """, logger: logger)
            return try await Self.decode(rows, tenant: tenant).map(\.0)
        }
    }
}
