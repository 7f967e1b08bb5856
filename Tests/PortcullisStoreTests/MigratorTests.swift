import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("Migrations")
struct MigratorTests {
    @Test("a fresh database gets every migration; applying again is a no-op")
    func freshThenNoOp() async throws {
        try await TestDatabase.withDatabase(migrated: false) { database in
            let migrator = Migrator(database: database, logger: TestDatabase.logger)
            #expect(await !migrator.isCurrent())
            let applied = try await migrator.migrate()
            #expect(applied == Migration.all.map(\.version))
            #expect(try await migrator.currentVersion() == Migration.latestVersion)
            #expect(await migrator.isCurrent())
            #expect(try await migrator.migrate().isEmpty)
            let tables = try await database.withConnection { connection in
                var names: [String] = []
                let rows = try await connection.query(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename", logger: TestDatabase.logger)
                for try await name in rows.decode(String.self) { names.append(name) }
                return names
            }
            #expect(
                tables == [
                    "action_codes", "admin_keys", "audit_log", "email_outbox", "identity_providers", "project_config",
                    "refresh_sessions", "retired_tenant_ids", "schema_migrations", "service_accounts", "signing_keys", "tenants",
                    "user_providers", "users",
                ])
        }
    }

    @Test("a migration outside a transaction (an index built concurrently) leaves a valid index, and runs again from its start")
    func nonTransactional() async throws {
        try await TestDatabase.withDatabase { database in
            let migration = try #require(Migration.all.first { !$0.transactional })
            let validIndexes = {
                try await database.withConnection { connection in
                    let rows = try await connection.query(
                        "SELECT count(*) FROM pg_index WHERE indexrelid = 'users_created_at'::regclass AND indisvalid",
                        logger: TestDatabase.logger)
                    for try await count in rows.decode(Int.self) { return count }
                    return -1
                }
            }
            #expect(try await validIndexes() == 1)
            // Cut short after its statements, before its version was recorded: the next start runs it again.
            try await database.withConnection { connection in
                try await connection.query(
                    "DELETE FROM schema_migrations WHERE version = \(migration.version)", logger: TestDatabase.logger)
            }
            #expect(try await Migrator(database: database, logger: TestDatabase.logger).migrate() == [migration.version])
            #expect(try await validIndexes() == 1)
        }
    }

    @Test("concurrent migrators on separate pools all succeed and apply each version once")
    func concurrent() async throws {
        let settings = try await TestDatabase.create()
        let pools = (0..<4).map { _ in Database(settings: settings, logger: TestDatabase.logger) }
        try await withThrowingTaskGroup(of: Void.self) { runners in
            for pool in pools { runners.addTask { await pool.run() } }
            defer { runners.cancelAll() }
            let results = try await withThrowingTaskGroup(of: [Int].self) { group in
                for pool in pools {
                    group.addTask { try await Migrator(database: pool, logger: TestDatabase.logger).migrate() }
                }
                return try await group.reduce(into: [[Int]]()) { $0.append($1) }
            }
            #expect(results.flatMap { $0 }.sorted() == Migration.all.map(\.version))
            let count = try await pools[0].withConnection { connection in
                let rows = try await connection.query("SELECT count(*) FROM schema_migrations", logger: TestDatabase.logger)
                for try await count in rows.decode(Int.self) { return count }
                return -1
            }
            #expect(count == Migration.all.count)
        }
    }
}
