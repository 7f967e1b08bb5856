import Foundation
public import Logging
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// All SQL of the `tenants` table.
///
/// Every change runs in one transaction with its audit row and the
/// `pg_notify` that tells other instances to drop their cached copy.
public struct TenantRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Creates a tenant with a generated id, never one a deleted tenant had.
    public func create(settings: TenantSettings, actor: String) async throws -> Tenant {
        // A generated id collides with probability ~1/36^5 per existing slug twin; retry a few times.
        for _ in 0..<5 {
            if let created = try await create(settings: settings, actor: actor, id: TenantID.generate(displayName: settings.displayName)) {
                return created
            }
        }
        throw AuthError(.internalError, detail: "could not allocate a tenant id")
    }

    /// Creates a tenant with the id `id`; `nil` when a tenant has it, or had it and was deleted.
    public func create(settings: TenantSettings, actor: String, id: String) async throws -> Tenant? {
        let document = try settings.document
        return try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                INSERT INTO tenants (tenant_id, settings)
                SELECT \(id), \(document.serialized())::jsonb
                WHERE NOT EXISTS (SELECT 1 FROM retired_tenant_ids WHERE tenant_id = \(id))
                ON CONFLICT (tenant_id) DO NOTHING
                RETURNING version, created_at
                """, logger: logger)
            for try await (version, createdAt) in rows.decode((Int64, Date).self) {
                let tenant = Tenant(id: id, settings: settings, version: version, createTime: createdAt)
                try await AuditLogRepository.record(
                    AuditEntry(tenantId: id, actor: actor, action: "tenant.create", target: "tenants/\(id)", after: document),
                    in: transaction, logger: logger)
                try await transaction.announce(.tenant(id: id, version: version), logger: logger)
                return tenant
            }
            return nil
        }
    }

    /// Whether a tenant with that id exists or existed (was deleted: its id is retired).
    public func hasExisted(id: String) async throws -> Bool {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = \(id))
                    OR EXISTS (SELECT 1 FROM retired_tenant_ids WHERE tenant_id = \(id))
                """, logger: logger)
            for try await existed in rows.decode(Bool.self) { return existed }
            return false
        }
    }

    /// The tenant, or `nil` when there is none with that id.
    public func find(id: String) async throws -> Tenant? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT settings::text, version, created_at FROM tenants WHERE tenant_id = \(id)", logger: logger)
            for try await (settings, version, createdAt) in rows.decode((String, Int64, Date).self) {
                return Tenant(id: id, settings: try TenantSettings(document: settings), version: version, createTime: createdAt)
            }
            return nil
        }
    }

    /// Up to `limit` tenants ordered by id, starting after `afterId`.
    public func list(after afterId: String?, limit: Int) async throws -> [Tenant] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT tenant_id, settings::text, version, created_at FROM tenants
                WHERE tenant_id > \(afterId ?? "") ORDER BY tenant_id LIMIT \(limit)
                """, logger: logger)
            var tenants: [Tenant] = []
            for try await (id, settings, version, createdAt) in rows.decode((String, String, Int64, Date).self) {
                tenants.append(
                    Tenant(id: id, settings: try TenantSettings(document: settings), version: version, createTime: createdAt))
            }
            return tenants
        }
    }

    /// Applies `change` to the tenant's settings under a row lock; `nil` when the tenant does not exist.
    ///
    /// `change` may throw (a validation error) to abort without writing.
    public func update(
        id: String, actor: String, change: @escaping @Sendable (TenantSettings) throws -> TenantSettings
    ) async throws -> Tenant? {
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                "SELECT settings::text, created_at FROM tenants WHERE tenant_id = \(id) FOR UPDATE", logger: logger)
            var current: (TenantSettings, Date)?
            for try await (settings, createdAt) in rows.decode((String, Date).self) {
                current = (try TenantSettings(document: settings), createdAt)
            }
            guard let (before, createdAt) = current else { return nil }
            let after = try change(before)
            var version: Int64 = 0
            // `updated_at` is the row's own bookkeeping, on the database's clock like `created_at`.
            let updated = try await transaction.query(
                """
                UPDATE tenants SET settings = \(try after.document.serialized())::jsonb, version = version + 1,
                    updated_at = now()
                WHERE tenant_id = \(id) RETURNING version
                """, logger: logger)
            for try await newVersion in updated.decode(Int64.self) { version = newVersion }
            try await AuditLogRepository.record(
                AuditEntry(
                    tenantId: id, actor: actor, action: "tenant.update", target: "tenants/\(id)",
                    before: try before.document, after: try after.document), in: transaction, logger: logger)
            try await transaction.announce(.tenant(id: id, version: version), logger: logger)
            return Tenant(id: id, settings: after, version: version, createTime: createdAt)
        }
    }

    /// Deletes the tenant and everything it owns (its scoped admin keys, service accounts and
    /// providers included) and retires its id, in one transaction; `false` when it did not exist.
    public func delete(id: String, actor: String) async throws -> Bool {
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                "DELETE FROM tenants WHERE tenant_id = \(id) RETURNING settings::text", logger: logger)
            var before: TenantSettings?
            for try await settings in rows.decode(String.self) { before = try TenantSettings(document: settings) }
            guard let before else { return false }
            // Tenant-owned rows without a foreign key to tenants (the project's users share these tables);
            // sessions before users, the order a refresh locks them in (see `UserRepository.delete`).
            try await transaction.query("DELETE FROM refresh_sessions WHERE tenant_id = \(id)", logger: logger)
            try await transaction.query("DELETE FROM action_codes WHERE tenant_id = \(id)", logger: logger)
            try await transaction.query("DELETE FROM email_outbox WHERE tenant_id = \(id)", logger: logger)
            try await transaction.query("DELETE FROM users WHERE tenant_id = \(id)", logger: logger)
            try await transaction.query("DELETE FROM signing_keys WHERE tenant_id = \(id)", logger: logger)
            try await transaction.query("DELETE FROM identity_providers WHERE tenant_id = \(id)", logger: logger)
            try await transaction.query("DELETE FROM service_accounts WHERE tenant_id = \(id)", logger: logger)
            // Its scoped admin keys went with the tenant row (ON DELETE CASCADE); its id is never handed out again.
            try await transaction.query("INSERT INTO retired_tenant_ids (tenant_id) VALUES (\(id))", logger: logger)
            try await AuditLogRepository.record(
                AuditEntry(
                    tenantId: id, actor: actor, action: "tenant.delete", target: "tenants/\(id)",
                    before: try before.document), in: transaction, logger: logger)
            try await transaction.announce(.tenant(id: id, version: 0), logger: logger)
            return true
        }
    }
}
