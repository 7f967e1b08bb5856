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
    /// This instance's caches: what its transactions announce reaches them as each commits.
    public let subscribers = InvalidationSubscribers()
    let logger: Logger
    private let inUse = Counter()
    private let reachable = Atomic<Bool>(true)

    /// Creates the pool (not yet running).
    public init(settings: DatabaseSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        // The pool logs every connection attempt at info: twenty lines for one unreachable
        // server. The listener reports the outage once, by name (`InvalidationListener`).
        var background = logger
        background.logLevel = max(logger.logLevel, .warning)
        self.client = PostgresClient(configuration: settings.clientConfiguration, backgroundLogger: background)
    }

    /// Runs the pool until the task is cancelled (for one-shot commands; daemons run `client` as a service).
    public func run() async {
        await client.run()
    }

    /// The database time left to the request being served, set by the HTTP layer for each
    /// request (``RequestBudget``): its calls share one `database.request_timeout`, so a
    /// request that makes several still gives up within it. Calls outside a request get the
    /// whole timeout each.
    @TaskLocal public static var requestBudget: RequestBudget?

    /// Connections currently leased by Portcullis code.
    public var connectionsInUse: Int { inUse.value.load(ordering: .relaxed) }

    /// Whether PostgreSQL is believed reachable (see the type's discussion).
    public var isReachable: Bool { reachable.load(ordering: .relaxed) }

    /// Records what the canary connection saw: lost (`false`) or listening again (`true`).
    public func setReachable(_ isReachable: Bool) {
        reachable.store(isReachable, ordering: .relaxed)
    }

    /// Runs `body` on a leased connection, within ``DatabaseSettings/requestTimeout``.
    ///
    /// For reads. A write runs in ``withTransaction(function:_:)``: a single statement's
    /// implicit transaction commits only at the protocol's `Sync`, after postgres-nio has
    /// already reported the statement done, so a backend killed in between (or a commit
    /// that fails) would be acknowledged without being committed.
    ///
    /// PostgreSQL's errors come out as domain errors (`DatabaseErrors`): `AuthError` for
    /// bad values, a lost server or a fault, the `Conflict` a unique index enforces for its refusal.
    /// A call that outlives the timeout (waiting for a connection included) is
    /// `UNAVAILABLE`, logged with `function`, and its connection is closed.
    public func withConnection<Result: Sendable>(
        function: String = #function, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await bounded(function) { [client, logger] leased in
            do {
                return try await client.withConnection { connection in
                    leased.hold(connection)
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
    }

    /// Runs one statement that answers a row for each row it changed (`RETURNING 1`), and
    /// counts them, in a transaction of its own: the maintenance deletes report how much they did this way.
    func changedRows(_ statement: PostgresQuery, logger: Logger, function: String = #function) async throws -> Int {
        try await withTransaction(function: function) { transaction in
            var count = 0
            for try await _ in try await transaction.query(statement, logger: logger) { count += 1 }
            return count
        }
    }

    /// Runs `body` as one unit of work (``Transaction``), within
    /// ``DatabaseSettings/requestTimeout``: committed when it returns (and only then does this
    /// return), rolled back when it throws. The events it announced then reach this instance's
    /// ``subscribers``.
    ///
    /// Errors come out as thrown by `body` (an `AuthError` stays one), else the failed
    /// `BEGIN`/`COMMIT`, translated like ``withConnection(function:_:)``'s; a call past the
    /// timeout is `UNAVAILABLE`, and its connection is closed, which rolls the transaction back.
    public func withTransaction<Result: Sendable>(
        function: String = #function, _ body: @escaping @Sendable (Transaction) async throws -> Result
    ) async throws -> Result {
        let announcements = Transaction.Announcements()
        // After COMMIT, and also when it failed or timed out, whose outcome is unknown (or when
        // the body threw after announcing): dropping an entry that is still current costs
        // one reload, keeping a stale one would serve it.
        defer { subscribers.deliver(announcements.take()) }
        return try await bounded(function) { [client, logger] leased in
            do {
                return try await client.withTransaction(logger: logger) { connection in
                    leased.hold(connection)
                    return try await body(Transaction(connection: connection, announcements: announcements))
                }
            } catch let error as PostgresTransactionError {
                throw DatabaseErrors.translate(
                    error.closureError ?? error.beginError ?? error.commitError ?? error, logger: logger)
            } catch {
                throw DatabaseErrors.translateLease(error, logger: logger)
            }
        }
    }

    /// Runs `call` (which leases a connection and records it in its argument) within the
    /// request timeout, counting it as a leased connection while it runs.
    private func bounded<Result: Sendable>(
        _ function: String, _ call: @escaping @Sendable (LeasedConnection) async throws -> Result
    ) async throws -> Result {
        try admit()
        let budget = Self.requestBudget?.remaining(of: settings.requestTimeout) ?? settings.requestTimeout
        guard budget > .zero else {
            logger.error(
                "request spent its database.request_timeout before this database call; answering 503",
                metadata: ["call": "\(function)", "timeout": "\(settings.requestTimeout)"])
            throw AuthError(.unavailable)
        }
        let leased = LeasedConnection()
        let start = ContinuousClock.now
        defer { Self.requestBudget?.spend(.now - start) }
        do {
            return try await CallDeadline.run(
                within: budget,
                { [inUse] in
                    inUse.value.add(1, ordering: .relaxed)
                    defer { inUse.value.subtract(1, ordering: .relaxed) }
                    return try await call(leased)
                },
                expire: { [logger, settings] in
                    // The function names the statement; its parameters never reach a log.
                    logger.error(
                        "database call exceeded database.request_timeout; answering 503 and closing its connection",
                        metadata: [
                            "call": "\(function)", "timeout": "\(settings.requestTimeout)",
                            "database": "\(settings.host):\(settings.port)",
                        ])
                    leased.close()
                })
        } catch is CallDeadline.Expired {
            throw AuthError(.unavailable)
        }
    }

    private func admit() throws(AuthError) {
        guard reachable.load(ordering: .relaxed) else { throw AuthError(.unavailable) }
    }

    /// An error `body` threw, told apart from the pool's own.
    private struct BodyFailure: Error {
        let error: any Error
    }

    /// The count of leased connections, shared with the calls that outlive their caller.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// The connection a bounded call leased, so its deadline can close it.
    final class LeasedConnection: Sendable {
        private let connection = Mutex<PostgresConnection?>(nil)

        func hold(_ leased: PostgresConnection) {
            connection.withLock { $0 = leased }
        }

        /// Closes it: a query waiting on it fails, and the pool opens another.
        func close() {
            guard let leased = connection.withLock({ $0 }) else { return }
            Task { try? await leased.close() }
        }
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
                try await connection.query("SELECT 1", logger: self.logger)
                return true
            }
        } catch {
            return false
        }
    }
}
