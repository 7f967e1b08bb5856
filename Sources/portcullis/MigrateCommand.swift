import ArgumentParser
import PortcullisStore

/// `portcullis migrate`: applies pending migrations and exits.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply pending database migrations (safe to run concurrently).")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let settings = try await options.loadSettings()
        let logger = commandLogger(settings)
        let (applied, version) = try await withDatabase(settings, logger: logger) { database in
            let migrator = Migrator(database: database, logger: logger)
            let applied = try await migrator.migrate()
            return (applied, try await migrator.currentVersion())
        }
        print(
            applied.isEmpty
                ? "schema is current (version \(version))"
                : "applied \(applied.map(String.init).joined(separator: ", ")); schema version \(version)")
    }
}
