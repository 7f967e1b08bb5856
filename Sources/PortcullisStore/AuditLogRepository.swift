import Foundation
public import Logging
public import PortcullisCore
public import PortcullisJSON
import PostgresNIO

/// What an audited change records; written in the transaction of the change itself.
public struct AuditEntry: Sendable {
    /// The tenant concerned; `nil` for project-level changes.
    public var tenantId: String?
    /// Who acted (`adminKey:<id>`, `cli`).
    public var actor: String
    /// What happened (`tenant.update`).
    public var action: String
    /// The resource acted on (`tenants/acme-x7k2p`).
    public var target: String
    /// The resource before, if it existed. Never a secret.
    public var before: JSONValue?
    /// The resource after, if it still exists. Never a secret.
    public var after: JSONValue?

    /// Creates an entry.
    public init(
        tenantId: String?, actor: String, action: String, target: String, before: JSONValue? = nil,
        after: JSONValue? = nil
    ) {
        self.tenantId = tenantId
        self.actor = actor
        self.action = action
        self.target = target
        self.before = before
        self.after = after
    }
}

/// All SQL of the `audit_log` table.
public struct AuditLogRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Appends `entry` on `connection` (inside the caller's transaction).
    static func record(_ entry: AuditEntry, in transaction: Transaction, logger: Logger) async throws {
        try await transaction.query(
            """
            INSERT INTO audit_log (tenant_id, actor, action, target, before, after)
            VALUES (\(entry.tenantId), \(entry.actor), \(entry.action), \(entry.target),
                    \(entry.before?.serialized())::jsonb, \(entry.after?.serialized())::jsonb)
            """, logger: logger)
    }

    /// Appends `entries` on `connection` in one statement (inside the caller's transaction).
    static func record(_ entries: [AuditEntry], in transaction: Transaction, logger: Logger) async throws {
        guard !entries.isEmpty else { return }
        let rows = JSONValue.array(
            entries.map { entry in
                .object([
                    "tenant_id": entry.tenantId.map(JSONValue.string) ?? .null, "actor": .string(entry.actor),
                    "action": .string(entry.action), "target": .string(entry.target), "before": entry.before ?? .null,
                    "after": entry.after ?? .null,
                ])
            })
        try await transaction.query(
            """
            INSERT INTO audit_log (tenant_id, actor, action, target, before, after)
            SELECT e.tenant_id, e.actor, e.action, e.target, e.before, e.after
            FROM json_to_recordset(\(rows.serialized())::json)
                AS e(tenant_id text, actor text, action text, target text, before jsonb, after jsonb)
            """, logger: logger)
    }

    /// Appends `entry` inside `transaction`: the record commits exactly when the change it records does.
    public func record(_ entry: AuditEntry, in transaction: Transaction) async throws {
        try await Self.record(entry, in: transaction, logger: logger)
    }

    /// Appends `entry` in its own transaction (events that change nothing else, e.g. CLI key creation).
    public func record(_ entry: AuditEntry) async throws {
        try await database.withTransaction { transaction in
            try await Self.record(entry, in: transaction, logger: logger)
        }
    }

    /// Newest first: events of one tenant (`tenantId`), or of the whole project (`nil`),
    /// older than `beforeId` when paging.
    public func list(ofTenant tenantId: String?, beforeId: Int64?, limit: Int) async throws -> [AuditEvent] {
        try await database.withConnection { connection in
            let cursor = beforeId ?? Int64.max
            let rows: PostgresRowSequence
            if let tenantId {
                rows = try await connection.query(
                    """
                    SELECT event_id, tenant_id, actor, action, target, before::text, after::text, occurred_at
                    FROM audit_log WHERE tenant_id = \(tenantId) AND event_id < \(cursor)
                    ORDER BY event_id DESC LIMIT \(limit)
                    """, logger: logger)
            } else {
                rows = try await connection.query(
                    """
                    SELECT event_id, tenant_id, actor, action, target, before::text, after::text, occurred_at
                    FROM audit_log WHERE event_id < \(cursor)
                    ORDER BY event_id DESC LIMIT \(limit)
                    """, logger: logger)
            }
            var events: [AuditEvent] = []
            for try await (id, tenant, actor, action, target, before, after, time) in rows.decode(
                (Int64, String?, String, String, String, String?, String?, Date).self)
            {
                events.append(
                    AuditEvent(
                        id: id, tenantId: tenant, actor: actor, action: action, target: target,
                        before: before.flatMap { try? JSONValue.parse(Array($0.utf8)) },
                        after: after.flatMap { try? JSONValue.parse(Array($0.utf8)) }, time: time))
            }
            return events
        }
    }
}
