public import Logging
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// The settings of the project's own users (those outside any tenant), with their version.
public struct ProjectConfig: Sendable, Equatable {
    /// The settings; defaults until first changed.
    public var settings: TenantSettings
    /// 0 until first changed, then bumped by every change.
    public var version: Int64

    /// Creates a value.
    public init(settings: TenantSettings, version: Int64) {
        self.settings = settings
        self.version = version
    }
}

/// All SQL of the `project_config` table.
public struct ProjectConfigRepository: Sendable {
    let database: Database
    let projectId: String
    let logger: Logger

    /// A repository for one project's config.
    public init(database: Database, projectId: String, logger: Logger) {
        self.database = database
        self.projectId = projectId
        self.logger = logger
    }

    /// The current config; every default (version 0) when never set.
    public func get() async throws -> ProjectConfig {
        try await database.withConnection { connection in
            try await load(on: connection, lock: false)
        }
    }

    private func load(on connection: PostgresConnection, lock: Bool) async throws -> ProjectConfig {
        let rows =
            lock
            ? try await connection.query(
                "SELECT settings::text, version FROM project_config WHERE project_id = \(projectId) FOR UPDATE",
                logger: logger)
            : try await connection.query(
                "SELECT settings::text, version FROM project_config WHERE project_id = \(projectId)", logger: logger)
        for try await (settings, version) in rows.decode((String, Int64).self) {
            return ProjectConfig(settings: try TenantSettings(document: settings), version: version)
        }
        return ProjectConfig(settings: TenantSettings(), version: 0)
    }

    /// Applies `change` under a lock, audits it and notifies other instances.
    public func update(
        actor: String, change: @escaping @Sendable (TenantSettings) throws -> TenantSettings
    ) async throws -> ProjectConfig {
        try await database.withTransaction { transaction in
            // Serialise writers even before the row exists.
            try await transaction.query("SELECT pg_advisory_xact_lock(hashtext(\(projectId)))", logger: logger)
            let before = try await load(on: transaction.connection, lock: true)
            let after = try change(before.settings)
            // `updated_at` is the row's own bookkeeping, on the database's clock like `created_at`.
            let rows = try await transaction.query(
                """
                INSERT INTO project_config (project_id, settings) VALUES (\(projectId), \(try after.document.serialized())::jsonb)
                ON CONFLICT (project_id) DO UPDATE SET settings = excluded.settings,
                    version = project_config.version + 1, updated_at = now()
                RETURNING version
                """, logger: logger)
            var version: Int64 = 0
            for try await newVersion in rows.decode(Int64.self) { version = newVersion }
            try await AuditLogRepository.record(
                AuditEntry(
                    tenantId: nil, actor: actor, action: "config.update", target: "config",
                    before: try before.settings.document, after: try after.document), in: transaction, logger: logger)
            try await transaction.announce(.projectConfig(version: version), logger: logger)
            return ProjectConfig(settings: after, version: version)
        }
    }
}
