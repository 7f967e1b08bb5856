public import Logging
public import PostgresNIO
import Synchronization

/// The PostgreSQL pool every repository shares, with the gauges `/metrics` shows.
///
/// A thin wrapper over `PostgresClient` (which must be run as a service) that
/// counts leased connections, so operators can see pool pressure.
public final class Database: Sendable {
    /// The underlying pool; add it to the service group.
    public let client: PostgresClient
    /// The settings it was made from (the LISTEN connection reuses them).
    public let settings: DatabaseSettings
    let logger: Logger
    private let inUse = Atomic<Int>(0)

    /// Creates the pool (not yet running).
    public init(settings: DatabaseSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        self.client = PostgresClient(configuration: settings.clientConfiguration, backgroundLogger: logger)
    }

    /// Runs the pool until the task is cancelled (for one-shot commands; daemons run `client` as a service).
    public func run() async {
        await client.run()
    }

    /// Connections currently leased by Portcullis code.
    public var connectionsInUse: Int { inUse.load(ordering: .relaxed) }

    /// Runs `body` on a leased connection.
    public func withConnection<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        inUse.add(1, ordering: .relaxed)
        defer { inUse.subtract(1, ordering: .relaxed) }
        return try await client.withConnection { connection in try await body(connection) }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// Errors come out as thrown: `body`'s own (an ``AuthError`` stays one),
    /// else the failed `BEGIN`/`COMMIT`, rather than postgres-nio's wrapper.
    public func withTransaction<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        inUse.add(1, ordering: .relaxed)
        defer { inUse.subtract(1, ordering: .relaxed) }
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error.beginError ?? error.commitError ?? error
        }
    }

    /// Whether a trivial query succeeds.
    public func ping() async -> Bool {
        do {
            return try await withConnection { connection in
                try await connection.query("SELECT 1", logger: logger)
                return true
            }
        } catch {
            return false
        }
    }
}
