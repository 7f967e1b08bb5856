import ArgumentParser
import CoreMetrics
import Foundation
import Logging
import PortcullisAuth
import PortcullisStore

/// The configuration flags every command shares; each overrides its key from
/// the environment and the file.
struct ConfigOptions: ParsableArguments {
    @Option(help: "YAML configuration file (see config/portcullis.example.yaml).")
    var config: String?

    @Option(help: "Address to listen on (listen.host).")
    var listenHost: String?

    @Option(help: "Port to listen on (listen.port).")
    var listenPort: String?

    @Option(help: "Prefix of every issuer and action link (public_url).")
    var publicUrl: String?

    @Option(help: "The project id (project_id).")
    var projectId: String?

    @Option(help: "PostgreSQL URL (database.url).")
    var databaseUrl: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (log.level).")
    var logLevel: String?

    @Option(help: "text or json (log.format).")
    var logFormat: String?

    var loader: SettingsLoader {
        let flags: [String: String?] = [
            "listen.host": listenHost, "listen.port": listenPort, "public_url": publicUrl,
            "project_id": projectId, "database.url": databaseUrl, "log.level": logLevel, "log.format": logFormat,
        ]
        return SettingsLoader(overrides: flags.compactMapValues { $0 }, file: config)
    }

    /// Loads settings; a bad one prints its key and exits 78 (EX_CONFIG).
    func loadSettings(_ loader: SettingsLoader? = nil) async throws -> Settings {
        do {
            return try await (loader ?? self.loader).load()
        } catch let error as SettingsError {
            FileHandle.standardError.write(Data("portcullis: \(error)\n".utf8))
            throw ExitCode(78)
        }
    }
}

/// Runs `body` with a started connection pool, for one-shot commands.
func withDatabase<Result: Sendable>(
    _ settings: Settings, logger: Logger, _ body: @Sendable (Database) async throws -> Result
) async throws -> Result {
    // The pool's own background chatter (e.g. leases queued before it runs) is not for a CLI's output.
    var poolLogger = logger
    poolLogger.logLevel = .error
    // The pool opens all its connections at start; a one-shot command needs two at most.
    var databaseSettings = settings.database
    databaseSettings.maximumConnections = min(databaseSettings.maximumConnections, 2)
    let database = Database(settings: databaseSettings, logger: poolLogger)
    // Fails in seconds, naming the server, where the pool would wait a minute for its circuit breaker.
    try await database.probe()
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await database.run() }
        defer { group.cancelAll() }
        return try await body(database)
    }
}

/// Runs `body` with the service graph `serve` runs (without its background services) on a
/// started pool, for one-shot commands.
func withServices<Result: Sendable>(
    _ settings: Settings, logger: Logger, _ body: @Sendable (AuthServices) async throws -> Result
) async throws -> Result {
    try await withDatabase(settings, logger: logger) { database in
        try await body(
            AuthServices(
                configuration: settings.commandServices, database: database, logger: logger, metrics: NOOPMetricsHandler.instance))
    }
}

/// A logger for one-shot commands: warnings and worse, to standard error.
func commandLogger(_ settings: Settings) -> Logger {
    var logger = Logger(label: "portcullis") { label in StreamLogHandler.standardError(label: label) }
    logger.logLevel = settings.logLevel > .warning ? settings.logLevel : .warning
    return logger
}
