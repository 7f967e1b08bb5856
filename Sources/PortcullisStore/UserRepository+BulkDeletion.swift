import Foundation
import Logging
public import PortcullisCore
import PostgresNIO

/// The admin API's bulk deletion (`accounts:batchDelete`), audited.
extension UserRepository {
    /// What a bulk deletion did.
    public struct BulkDeletion: Sendable, Equatable {
        /// The uids deleted.
        public var deleted: Set<String>
        /// The uids kept because they are not disabled (only without `force`).
        public var notDisabled: Set<String>
    }

    /// Deletes the named accounts that exist and are disabled (any that exist, with `force`),
    /// with their sessions, in one transaction with a `user.delete` audit row each.
    ///
    /// The accounts to delete are chosen first, then their sessions go, then the accounts
    /// (the order a refresh locks them in). An account disabled meanwhile stays (and is
    /// reported), one enabled meanwhile is kept without `force`.
    public func delete(tenant: TenantScope, uids: [String], force: Bool, actor: String) async throws -> BulkDeletion {
        return try await database.withTransaction { transaction in
            let chosen = try await transaction.query(
                """
                SELECT uid FROM users WHERE tenant_id = \(tenant.key) AND uid = ANY(\(uids)) AND (\(force) OR disabled)
                """, logger: logger)
            var targets: [String] = []
            for try await uid in chosen.decode(String.self) { targets.append(uid) }
            try await transaction.query(
                "DELETE FROM refresh_sessions WHERE tenant_id = \(tenant.key) AND uid = ANY(\(targets))", logger: logger)
            try await transaction.query(
                "DELETE FROM action_codes WHERE tenant_id = \(tenant.key) AND uid = ANY(\(targets))", logger: logger)
            let rows = try await transaction.query(
                """
                DELETE FROM users WHERE tenant_id = \(tenant.key) AND uid = ANY(\(targets)) AND (\(force) OR disabled)
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            let deleted = try await Self.decode(rows, tenant: tenant).map(\.0)
            var kept: Set<String> = []
            if !force {
                let remaining = try await transaction.query(
                    "SELECT uid FROM users WHERE tenant_id = \(tenant.key) AND uid = ANY(\(uids))", logger: logger)
                for try await uid in remaining.decode(String.self) { kept.insert(uid) }
            }
            try await transaction.announce(deleted.map { InvalidationEvent.user(tenant, uid: $0.uid) }, logger: logger)
            try await AuditLogRepository.record(
                deleted.map { Self.audit($0, actor: actor, action: "user.delete", before: Self.auditRecord($0)) },
                in: transaction, logger: logger)
            return BulkDeletion(deleted: Set(deleted.map(\.uid)), notDisabled: kept)
        }
    }
}
