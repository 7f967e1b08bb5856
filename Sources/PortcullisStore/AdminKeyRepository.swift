public import Foundation
public import Logging
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// All SQL of the `admin_keys` table. Secrets are never stored, only their SHA-256.
public struct AdminKeyRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Stores a new key made at `createTime`; `Conflict.tenantMissing` when its tenant does not exist.
    public func insert(
        keyId: String, secretHash: [UInt8], displayName: String, scope: AdminScope, actor: String, at createTime: Date
    ) async throws -> AdminKey {
        try await database.withTransaction { transaction in
            if let tenantId = scope.tenantId {
                let exists = try await transaction.query(
                    "SELECT 1 FROM tenants WHERE tenant_id = \(tenantId) FOR SHARE", logger: logger)
                var found = false
                for try await _ in exists.decode(Int.self) { found = true }
                guard found else { throw Conflict.tenantMissing }
            }
            try await transaction.query(
                """
                INSERT INTO admin_keys (key_id, tenant_id, display_name, secret_hash, created_at)
                VALUES (\(keyId), \(scope.tenantId), \(displayName), \(ByteBuffer(bytes: secretHash)), \(createTime))
                """, logger: logger)
            let key = AdminKey(
                keyId: keyId, displayName: displayName, scope: scope, createTime: createTime, lastUsedTime: nil)
            try await AuditLogRepository.record(
                AuditEntry(
                    tenantId: scope.tenantId, actor: actor, action: "adminKey.create", target: "adminKeys/\(keyId)",
                    after: .object(["displayName": .string(displayName), "tenantId": scope.tenantId.map(JSONValue.string) ?? .null])),
                in: transaction, logger: logger)
            return key
        }
    }

    /// The live (unrevoked) key with this id and its stored hash, or `nil`.
    public func findActive(keyId: String) async throws -> (key: AdminKey, secretHash: [UInt8])? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT display_name, tenant_id, secret_hash, created_at, last_used_at
                FROM admin_keys WHERE key_id = \(keyId) AND revoked_at IS NULL
                """, logger: logger)
            for try await (name, tenantId, hash, createdAt, lastUsed) in rows.decode(
                (String, String?, ByteBuffer, Date, Date?).self)
            {
                let key = AdminKey(
                    keyId: keyId, displayName: name, scope: tenantId.map(AdminScope.tenant) ?? .project,
                    createTime: createdAt, lastUsedTime: lastUsed)
                return (key, Array(hash.readableBytesView))
            }
            return nil
        }
    }

    /// Records a use at `time`, unless one was recorded since `since` (instances racing
    /// to record the same minute write once).
    public func touch(keyId: String, at time: Date, unlessUsedSince since: Date) async throws {
        _ = try await database.withTransaction { transaction in
            try await transaction.query(
                """
                UPDATE admin_keys SET last_used_at = \(time)
                WHERE key_id = \(keyId) AND (last_used_at IS NULL OR last_used_at < \(since))
                """, logger: logger)
        }
    }

    /// Live keys, newest first; only those of `tenantId` when given.
    public func list(ofTenant tenantId: String?) async throws -> [AdminKey] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT key_id, display_name, tenant_id, created_at, last_used_at FROM admin_keys
                WHERE revoked_at IS NULL AND (\(tenantId)::text IS NULL OR tenant_id = \(tenantId))
                ORDER BY created_at DESC, key_id
                """, logger: logger)
            var keys: [AdminKey] = []
            for try await (keyId, name, tenant, createdAt, lastUsed) in rows.decode(
                (String, String, String?, Date, Date?).self)
            {
                keys.append(
                    AdminKey(
                        keyId: keyId, displayName: name, scope: tenant.map(AdminScope.tenant) ?? .project,
                        createTime: createdAt, lastUsedTime: lastUsed))
            }
            return keys
        }
    }

    /// Revokes a key at `time`; `false` when no live key has that id.
    public func revoke(keyId: String, actor: String, at time: Date) async throws -> Bool {
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                UPDATE admin_keys SET revoked_at = \(time) WHERE key_id = \(keyId) AND revoked_at IS NULL
                RETURNING tenant_id
                """, logger: logger)
            var revoked = false
            var tenantId: String?
            for try await tenant in rows.decode(String?.self) {
                revoked = true
                tenantId = tenant
            }
            guard revoked else { return false }
            try await AuditLogRepository.record(
                AuditEntry(tenantId: tenantId, actor: actor, action: "adminKey.revoke", target: "adminKeys/\(keyId)"),
                in: transaction, logger: logger)
            return true
        }
    }
}
