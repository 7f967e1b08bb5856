import Foundation
public import Logging
public import PortcullisStore
import PostgresNIO

/// Fresh databases on the throwaway cluster `scripts/test` starts.
///
/// Each test gets its own database, so suites and tests run in parallel
/// without seeing each other's rows.
public enum TestDatabase {
    /// A quiet logger for tests (set `PORTCULLIS_TEST_LOG=debug` to see more).
    public static var logger: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = ProcessInfo.processInfo.environment["PORTCULLIS_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        return logger
    }

    /// The cluster's maintenance database, from `PORTCULLIS_TEST_DATABASE_URL`.
    public static var serverSettings: DatabaseSettings {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["PORTCULLIS_TEST_DATABASE_URL"],
                var settings = DatabaseSettings(url: url, maximumConnections: 4)
            else {
                throw TestSetupError(
                    "PORTCULLIS_TEST_DATABASE_URL is not set: run the tests with scripts/test, which starts PostgreSQL")
            }
            // The suite's own load (hundreds of tests on two cores) is no database fault, as in
            // `TestGateway`: the tests that time a fault set their own timeout.
            settings.requestTimeout = .seconds(30)
            return settings
        }
    }

    /// Creates an empty database and returns settings that reach it.
    public static func create() async throws -> DatabaseSettings {
        var settings = try serverSettings
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        // One statement needs one connection: hundreds of suites create databases at once.
        var maintenance = settings
        maintenance.maximumConnections = 1
        let database = Database(settings: maintenance, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.run() }
            defer { group.cancelAll() }
            _ = try await database.withConnection { connection in
                // The name is generated above from hex digits: safe to splice into DDL.
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
            }
        }
        settings.database = name
        return settings
    }

    /// Runs `body` with a running pool on a fresh database, migrated unless told otherwise.
    public static func withDatabase<Result: Sendable>(
        migrated: Bool = true, _ body: @Sendable (Database) async throws -> Result
    ) async throws -> Result {
        let database = Database(settings: try await create(), logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.run() }
            defer { group.cancelAll() }
            if migrated { try await Migrator(database: database, logger: logger).migrate() }
            return try await body(database)
        }
    }
}

/// The test environment is incomplete (reported as a failure, never a skip).
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns how long it took, or `nil`.
public func eventually(
    within timeout: Duration = .seconds(5), _ condition: () async throws -> Bool
) async throws -> Duration? {
    let start = ContinuousClock.now
    while ContinuousClock.now - start < timeout {
        if try await condition() { return ContinuousClock.now - start }
        try await Task.sleep(for: .milliseconds(10))
    }
    return nil
}
