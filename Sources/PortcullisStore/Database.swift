public import Logging
import PortcullisCore
public import PostgresNIO
import Synchronization

/// The PostgreSQL pool every repository shares, with the gauges `/metrics` shows.
///
/// A thin wrapper over `PostgresClient` (which must be run as a service) that
/// counts leased connections, so operators can see pool pressure, and fails fast
/// while PostgreSQL is known to be gone (DESIGN.md §6).
///
/// The pool itself would keep a request waiting for a connection until its circuit
/// breaker trips, a minute after connecting started to fail. The ``InvalidationListener``'s
/// connection is the canary instead: the moment it drops, requests get
/// `AuthError(.unavailable)` (503) without waiting, until the listener is back, which
/// it is as soon as the pool can connect again.
public final class Database: Sendable {
    /// The underlying pool; add it to the service group.
    public let client: PostgresClient
    /// The settings it was made from (the LISTEN connection reuses them).
    public let settings: DatabaseSettings
    let logger: Logger
    private let inUse = Atomic<Int>(0)
    private let reachable = Atomic<Bool>(true)

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

    /// Whether PostgreSQL is believed reachable (see the type's discussion).
    public var isReachable: Bool { reachable.load(ordering: .relaxed) }

    /// Records what the canary connection saw: lost (`false`) or listening again (`true`).
    public func setReachable(_ isReachable: Bool) {
        reachable.store(isReachable, ordering: .relaxed)
    }

    /// Runs `body` on a leased connection.
    ///
    /// PostgreSQL's errors come out as domain errors (`DatabaseErrors`): `AuthError` for
    /// bad values, a lost server or a fault, ``UniqueViolation`` for a unique index's refusal.
    public func withConnection<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try admit()
        inUse.add(1, ordering: .relaxed)
        defer { inUse.subtract(1, ordering: .relaxed) }
        do {
            return try await client.withConnection { connection in
                do {
                    return try await body(connection)
                } catch {
                    throw BodyFailure(error: error)
                }
            }
        } catch let failure as BodyFailure {
            throw DatabaseErrors.translate(failure.error, logger: logger)
        } catch {
            throw DatabaseErrors.translateLease(error, logger: logger)
        }
    }

    /// Runs one statement that answers a row for each row it changed (`RETURNING 1`), and
    /// counts them: the maintenance deletes report how much they did this way.
    func changedRows(_ statement: PostgresQuery, logger: Logger) async throws -> Int {
        try await withConnection { connection in
            var count = 0
            for try await _ in try await connection.query(statement, logger: logger) { count += 1 }
            return count
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// Errors come out as thrown by `body` (an `AuthError` stays one), else the failed
    /// `BEGIN`/`COMMIT`, translated like ``withConnection(_:)``'s.
    public func withTransaction<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try admit()
        inUse.add(1, ordering: .relaxed)
        defer { inUse.subtract(1, ordering: .relaxed) }
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            throw DatabaseErrors.translate(
                error.closureError ?? error.beginError ?? error.commitError ?? error, logger: logger)
        } catch {
            throw DatabaseErrors.translateLease(error, logger: logger)
        }
    }

    private func admit() throws(AuthError) {
        guard reachable.load(ordering: .relaxed) else { throw AuthError(.unavailable) }
    }

    /// An error `body` threw, told apart from the pool's own.
    private struct BodyFailure: Error {
        let error: any Error
    }

    /// Opens one connection with these settings (TLS included), runs `SELECT 1` and closes it,
    /// without the pool: the pool would keep a caller waiting until its circuit breaker trips,
    /// a minute later. Startup calls it so a wrong address, a refused login or a server
    /// without the TLS `database.tls` demands fails within seconds, naming the server.
    ///
    /// - Throws: ``DatabaseUnreachable``.
    public func probe() async throws {
        do {
            let connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: settings.connectionConfiguration(), id: 0,
                logger: logger
            ).get()
            let result: Result<Void, any Error>
            do {
                try await connection.query("SELECT 1", logger: logger)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            // Closing a connection we are done with cannot change the answer.
            try? await connection.close()
            try result.get()
        } catch {
            throw DatabaseUnreachable(settings: settings, underlying: error)
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
