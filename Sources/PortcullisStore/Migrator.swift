public import Logging
import PostgresNIO

/// Applies ``Migration/all`` under a PostgreSQL advisory lock.
///
/// Several instances may start at once: each takes the same session-level
/// advisory lock, so one applies what is missing and the others then find
/// nothing to do.
public struct Migrator: Sendable {
    /// Arbitrary constant naming Portcullis' migration lock.
    static let lockKey: Int64 = 0x706f_7274_6375_6c6c  // "portcull"
    /// How long a migrator waits between tries for the lock.
    static let lockRetry: Duration = .milliseconds(100)

    let database: Database
    let logger: Logger

    /// A migrator for the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Applies every pending migration; returns the versions it applied.
    ///
    /// Not bounded by `database.request_timeout`: migrating is no request, and a migration
    /// that rewrites a large table, or waits for another instance's, takes what it takes.
    /// Callers probe the server first (``Database/probe()``), so an unreachable one fails fast.
    @discardableResult
    public func migrate() async throws -> [Int] {
        do {
            return try await database.pool().client.withConnection { connection in
                try await lock(on: connection)
                do {
                    let applied = try await applyPending(on: connection)
                    try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                    return applied
                } catch {
                    // Best effort: the migration's own error is the one to report, and the lock is
                    // released with the session anyway if this fails too.
                    _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                    throw error
                }
            }
        } catch {
            throw DatabaseErrors.translate(error, logger: logger)
        }
    }

    /// Takes the migration lock, trying again until it is free rather than blocking in
    /// `pg_advisory_lock`: a waiting statement holds a snapshot, which a concurrent index
    /// build (a non-transactional migration) waits out, while the builder holds the lock the
    /// waiter wants — a deadlock PostgreSQL ends by failing one of them.
    private func lock(on connection: PostgresConnection) async throws {
        while true {
            let rows = try await connection.query("SELECT pg_try_advisory_lock(\(Self.lockKey))", logger: logger)
            for try await locked in rows.decode(Bool.self) where locked { return }
            try await Task.sleep(for: Self.lockRetry)
        }
    }

    private func applyPending(on connection: PostgresConnection) async throws -> [Int] {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        var done = Set<Int>()
        for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: logger)
            .decode(Int.self)
        {
            done.insert(version)
        }
        var applied: [Int] = []
        for migration in Migration.all where !done.contains(migration.version) {
            logger.info("applying migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            if migration.transactional {
                try await connection.withTransaction(logger: logger) { try await apply(migration, on: $0) }
            } else {
                try await apply(migration, on: connection)
            }
            applied.append(migration.version)
        }
        return applied
    }

    /// Runs `migration`'s statements and records its version, inside the caller's
    /// transaction or (a non-transactional migration) each statement committing on its own.
    private func apply(_ migration: Migration, on connection: PostgresConnection) async throws {
        for statement in migration.statements {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        try await connection.query(
            "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
            logger: logger)
    }

    /// The highest applied version, or 0 on an empty database.
    public func currentVersion() async throws -> Int {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT coalesce(max(version), 0) FROM schema_migrations", logger: logger)
            for try await version in rows.decode(Int.self) { return version }
            return 0
        }
    }

    /// Whether every known migration has been applied (what `/readyz` checks). A database
    /// that cannot be asked is not ready either: `false`, which `/readyz` answers with 503.
    public func isCurrent() async -> Bool {
        (try? await currentVersion()) == Migration.latestVersion
    }
}
