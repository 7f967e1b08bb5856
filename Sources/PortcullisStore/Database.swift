import _ConnectionPoolModule
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
    public func withConnection<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try admit()
        inUse.add(1, ordering: .relaxed)
        defer { inUse.subtract(1, ordering: .relaxed) }
        do {
            return try await client.withConnection { connection in try await body(connection) }
        } catch let error as ConnectionPoolError {
            throw Self.translate(error)
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// Errors come out as thrown: `body`'s own (an ``AuthError`` stays one),
    /// else the failed `BEGIN`/`COMMIT`, rather than postgres-nio's wrapper.
    public func withTransaction<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try admit()
        inUse.add(1, ordering: .relaxed)
        defer { inUse.subtract(1, ordering: .relaxed) }
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error.beginError ?? error.commitError ?? error
        } catch let error as ConnectionPoolError {
            throw Self.translate(error)
        }
    }

    private func admit() throws(AuthError) {
        guard reachable.load(ordering: .relaxed) else { throw AuthError(.unavailable) }
    }

    /// The pool's own failures (no connection could be made, the pool is shutting down)
    /// are the database being unavailable, not a fault of the request.
    private static func translate(_ error: ConnectionPoolError) -> any Error {
        error == .requestCancelled ? CancellationError() : AuthError(.unavailable)
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

/// PostgreSQL could not be reached or refused the connection; says where and why, never the password.
public struct DatabaseUnreachable: Error, CustomStringConvertible {
    /// The server's address.
    public let host: String
    /// The server's port.
    public let port: Int
    /// What went wrong, in words.
    public let reason: String

    init(settings: DatabaseSettings, underlying: any Error) {
        host = settings.host
        port = settings.port
        reason = Self.describe(underlying, tls: settings.effectiveTLSMode)
    }

    public var description: String { "cannot connect to PostgreSQL at \(host):\(port): \(reason)" }

    private static func describe(_ error: any Error, tls: DatabaseSettings.TLSMode) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        switch error.code {
        case .sslUnsupported: return "the server does not offer TLS, which database.tls \(tls.rawValue) requires"
        case .failedToAddSSLHandler: return "TLS could not be set up"
        case .server: return error.serverInfo?[.message] ?? "the server refused the connection"
        case .connectionError: return error.underlying.map { "\($0)" } ?? "connection failed"
        default: return "\(error.code)"
        }
    }
}
