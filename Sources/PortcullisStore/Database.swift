public import Logging
public import PortcullisCore
public import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// The PostgreSQL pool every repository shares, on the server that accepts writes, with the
/// gauges `/metrics` shows.
///
/// Run as a service, it finds the server that takes writes among ``DatabaseSettings/endpoints``
/// (libpq's `target_session_attrs=read-write`: each is asked its `transaction_read_only`, and
/// none is taken while two different servers take writes, `findWritableServer()`), makes a
/// `PostgresClient` pool on it, and keeps it until that server is found gone: the
/// listener's connection dropped, a call outlived `database.request_timeout`, or a write met
/// a read-only server (a standby after a failover) — the first two are confirmed by asking
/// the server again. Then requests answer 503 at once while it searches again, and a new pool
/// (the pool's configuration unchanged) takes over on the server found; the old one is shut
/// down. One server or several, a restart or a failover, the same path: a fresh pool connects
/// at once, where a pool that lost its server would retry on a backoff grown to seconds.
///
/// The pool itself would keep a request waiting for a connection until its circuit
/// breaker trips, a minute after connecting started to fail. The ``InvalidationListener``'s
/// connection is the canary instead: the moment it drops, requests get
/// `AuthError(.unavailable)` (503) without waiting, until the listener is back, which
/// it is as soon as a pool can connect again. It counts leased connections, so operators can
/// see pool pressure, and fails fast while PostgreSQL is known to be gone (DESIGN.md §6).
public final class Database: Service, Sendable {
    /// The settings it was made from.
    public let settings: DatabaseSettings
    /// This instance's caches: what its transactions announce reaches them as each commits.
    public let subscribers = InvalidationSubscribers()
    let logger: Logger
    /// The pools' own logger, at `error`: they log every connection attempt at info (twenty
    /// lines for one unreachable server) and a lease before their `run` starts (the moment a
    /// new pool is installed) as a warning. The listener and the search report an outage
    /// once, by name (`InvalidationListener`, ``findWritableServer()``).
    private let poolLogger: Logger
    /// Where the outages' times are read: the services' clock.
    let clock: any WallClock
    private let inUse = Counter()
    private let reachability = Reachability()
    private let slot = PoolSlot()
    private let suspicions = AsyncStream.makeStream(of: Suspicion.self, bufferingPolicy: .bufferingNewest(16))

    /// Creates the database (no pool until it runs); `clock` times its outages (``outages``).
    public init(settings: DatabaseSettings, logger: Logger, clock: any WallClock = SystemClock()) {
        self.settings = settings
        self.logger = logger
        self.clock = clock
        var poolLogger = logger
        poolLogger.logLevel = max(logger.logLevel, .error)
        self.poolLogger = poolLogger
    }

    /// Finds the server that takes writes, runs a pool on it, and moves to another when it is
    /// found gone, until cancelled or gracefully shut down (a service of the daemon; one-shot
    /// commands run it in a task of their own).
    public func run() async {
        await cancelWhenGracefulShutdown { await self.runPools() }
    }

    private func runPools() async {
        await withDiscardingTaskGroup { group in
            var suspicions = self.suspicions.stream.makeAsyncIterator()
            var generation = 0
            while let endpoint = await findWritableServer() {
                generation += 1
                let pool = Pool(
                    endpoint: endpoint,
                    client: PostgresClient(configuration: settings.clientConfiguration(for: endpoint), backgroundLogger: poolLogger),
                    generation: generation)
                let retirement = AsyncStream.makeStream(of: Never.self)
                group.addTask {
                    // Ends when the pool is retired (its stream finishes) or the database stops.
                    await withDiscardingTaskGroup { running in
                        running.addTask { await pool.client.run() }
                        for await _ in retirement.stream {}
                        running.cancelAll()
                    }
                }
                slot.install(pool)
                setReachable(true)
                guard let since = await waitUntilGone(pool, suspicions: &suspicions) else { break }
                setReachable(false, at: since)
                slot.clear()
                // Its server is gone or read-only: what it still runs would fail or time out anyway.
                retirement.continuation.finish()
            }
            group.cancelAll()
        }
    }

    /// Waits until `pool`'s server is found gone, and returns when the evidence began, or
    /// `nil` when the database stops.
    private func waitUntilGone(_ pool: Pool, suspicions: inout AsyncStream<Suspicion>.Iterator) async -> Timestamp? {
        while let suspicion = await suspicions.next() {
            guard suspicion.generation == pool.generation else { continue }
            if case .readOnly = suspicion.kind {
                logger.warning(
                    "the PostgreSQL server no longer accepts writes; looking for the one that does",
                    metadata: ["database": "\(pool.endpoint)"])
                return suspicion.since
            }
            // A dropped connection or a slow call: gone only if the server says so too. A server
            // refusing one more connection (too many clients) is alive: its pool keeps working.
            let check = await check(pool.endpoint)
            switch check {
            case .writable: continue
            case .unreachable(let error) where DatabaseErrors.isOverloaded(error): continue
            case .readOnly, .unreachable:
                logger.warning(
                    "lost the PostgreSQL server; looking for the one that accepts writes",
                    metadata: ["database": "\(pool.endpoint)", "reason": "\(check.describe(tls: settings.effectiveTLSMode))"])
                return suspicion.since
            }
        }
        return nil
    }

    /// Reports what a caller of `pool` saw, which began at `since` (now unless said);
    /// ``run()`` decides whether its server is gone.
    func suspect(_ kind: Suspicion.Kind, of pool: Pool, since: Timestamp? = nil) {
        suspicions.continuation.yield(Suspicion(kind: kind, generation: pool.generation, since: since ?? clock.now()))
    }

    /// The listener lost its connection to `pool`'s server: requests answer 503 until it
    /// listens again, unless a newer pool has already taken over.
    func listenerLost(_ pool: Pool) {
        if slot.current?.generation == pool.generation { setReachable(false) }
        suspect(.lost, of: pool)
    }

    /// The pool on the server that takes writes, waiting while there is none (at start-up, or
    /// during a search); for work that is no request: migrations, the listener, tests.
    public func pool() async throws -> Pool {
        try await slot.pool()
    }

    /// The database time left to the request being served, set by the HTTP layer for each
    /// request (``RequestBudget``): its calls share one `database.request_timeout`, so a
    /// request that makes several still gives up within it. Calls outside a request get the
    /// whole timeout each.
    @TaskLocal public static var requestBudget: RequestBudget?

    /// Connections currently leased by Portcullis code.
    public var connectionsInUse: Int { inUse.value.load(ordering: .relaxed) }

    /// Whether PostgreSQL is believed reachable (see the type's discussion).
    public var isReachable: Bool { reachability.isReachable }

    /// The last periods PostgreSQL was found unreachable (unix seconds, on the database's
    /// clock), oldest first: from when the evidence began (a call that then timed out, the
    /// listener's connection dropping) until a pool or the listener was back. The refresh
    /// tokens' grace window does not count them (`RefreshTokenPolicy`).
    public var outages: [Range<Int64>] { reachability.outages }

    /// Records what the canary connection saw: lost (`false`) or listening again (`true`), at
    /// `instant` (now unless said; for a loss, when its evidence began).
    public func setReachable(_ isReachable: Bool, at instant: Timestamp? = nil) {
        reachability.set(isReachable, at: instant ?? clock.now())
    }

    /// Runs `body` on a leased connection, within ``DatabaseSettings/requestTimeout``.
    ///
    /// For reads. A write runs in ``withTransaction(function:_:)`` (or `committed(_:logger:function:)`):
    /// a single statement's implicit transaction commits only at the protocol's `Sync`, after
    /// postgres-nio has already reported the statement done, so a backend killed in between
    /// (or a commit that fails) would be acknowledged without being committed.
    ///
    /// PostgreSQL's errors come out as domain errors (`DatabaseErrors`): `AuthError` for
    /// bad values, a lost server or a fault, the `Conflict` a unique index enforces for its refusal.
    /// A call that outlives the timeout (waiting for a connection included) is
    /// `UNAVAILABLE`, logged with `function`, and its connection is closed.
    public func withConnection<Result: Sendable>(
        function: String = #function, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await bounded(function) { [logger] pool, leased in
            do {
                return try await pool.client.withConnection { connection in
                    leased.hold(connection)
                    do {
                        return try await body(connection)
                    } catch {
                        throw BodyFailure(error: error)
                    }
                }
            } catch let failure as BodyFailure {
                if DatabaseErrors.isReadOnly(failure.error) { self.suspect(.readOnly, of: pool) }
                throw DatabaseErrors.translate(failure.error, logger: logger)
            } catch {
                throw DatabaseErrors.translateLease(error, logger: logger)
            }
        }
    }

    /// Runs `statement` as a transaction of its own and returns its rows once PostgreSQL has
    /// confirmed the commit: a write of one statement in two round trips, where
    /// ``withTransaction(function:_:)``'s `BEGIN` … `COMMIT` takes three. The batched refresh
    /// and sign-in run this way: each round trip is a wakeup of this daemon and of a backend,
    /// and they were most of a batch's time (BENCHMARKS.md).
    ///
    /// A statement outside `BEGIN` commits at the protocol's `Sync`, after postgres-nio has
    /// reported it done, so its rows prove nothing. The confirmation is the next query on the
    /// connection: postgres-nio sends it only after that `Sync`'s `ReadyForQuery`, and closes
    /// the connection when an error comes after a statement's completion (a commit refused),
    /// so it is answered only if the commit succeeded. Errors and the timeout are
    /// ``withConnection(function:_:)``'s; a failed confirmation leaves the commit's outcome
    /// unknown, as a lost `COMMIT` reply does, and is `UNAVAILABLE`.
    func committed<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger, function: String = #function
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await withConnection(function: function) { connection in
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            // Written from the connection's event loop, where the check and the write see the
            // connection as its reader does: a query written once it has closed (as it does
            // when a commit is refused) is never answered.
            try await connection.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
                guard !connection.isClosed else { return connection.eventLoop.makeFailedFuture(AuthError(.unavailable)) }
                return connection.query("SELECT 1", logger: logger).map { _ in }
            }.get()
            return rows
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
        return try await bounded(function) { [logger] pool, leased in
            do {
                return try await pool.client.withTransaction(logger: logger) { connection in
                    leased.hold(connection)
                    return try await body(Transaction(connection: connection, announcements: announcements))
                }
            } catch let error as PostgresTransactionError {
                let cause = error.closureError ?? error.beginError ?? error.commitError ?? error
                if DatabaseErrors.isReadOnly(cause) { self.suspect(.readOnly, of: pool) }
                throw DatabaseErrors.translate(cause, logger: logger)
            } catch {
                throw DatabaseErrors.translateLease(error, logger: logger)
            }
        }
    }

    /// Runs `call` (which leases a connection from the pool it is given and records it in its
    /// second argument) within the request timeout, counting it as a leased connection while
    /// it runs. A call that outlives the timeout makes its server suspect.
    private func bounded<Result: Sendable>(
        _ function: String, _ call: @escaping @Sendable (Pool, LeasedConnection) async throws -> Result
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
        let began = clock.now()
        defer { Self.requestBudget?.spend(.now - start) }
        do {
            return try await CallDeadline.run(
                within: budget,
                { [inUse, slot] in
                    inUse.value.add(1, ordering: .relaxed)
                    defer { inUse.value.subtract(1, ordering: .relaxed) }
                    // Waits only before the first pool exists: during a search requests are refused at `admit`.
                    let pool = try await slot.pool()
                    leased.use(pool)
                    return try await call(pool, leased)
                },
                expire: { [logger, settings] in
                    // The function names the statement; its parameters never reach a log.
                    logger.error(
                        "database call exceeded database.request_timeout; answering 503 and closing its connection",
                        metadata: [
                            "call": "\(function)", "timeout": "\(settings.requestTimeout)",
                            "database": "\(leased.pool.map { "\($0.endpoint)" } ?? "none yet")",
                        ])
                    // The server stopped answering when the call began, not when its deadline told.
                    if let pool = leased.pool { self.suspect(.timeout, of: pool, since: began) }
                    leased.close()
                })
        } catch is CallDeadline.Expired {
            throw AuthError(.unavailable)
        }
    }

    private func admit() throws(AuthError) {
        guard reachability.isReachable else { throw AuthError(.unavailable) }
    }

    /// An error `body` threw, told apart from the pool's own.
    private struct BodyFailure: Error {
        let error: any Error
    }

    /// The count of leased connections, shared with the calls that outlive their caller.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// The pool and connection a bounded call uses, so its deadline can name the server and
    /// close the connection.
    final class LeasedConnection: Sendable {
        private let state = Mutex<(pool: Pool?, connection: PostgresConnection?)>((nil, nil))

        var pool: Pool? { state.withLock { $0.pool } }

        func use(_ pool: Pool) {
            state.withLock { $0.pool = pool }
        }

        func hold(_ leased: PostgresConnection) {
            state.withLock { $0.connection = leased }
        }

        /// Closes it: a query waiting on it fails, and the pool opens another.
        func close() {
            guard let leased = state.withLock({ $0.connection }) else { return }
            Task { try? await leased.close() }
        }
    }

    /// Asks every server whether it takes writes, on connections of its own (TLS included),
    /// without a pool: the pool would keep a caller waiting until its circuit breaker trips, a
    /// minute later. Startup calls it so a wrong address, a refused login, a server without
    /// the TLS `database.tls` demands, or only standbys, fails within seconds, naming each server.
    ///
    /// - Throws: ``DatabaseUnreachable``.
    public func probe() async throws {
        let checks = await checkAll()
        guard !checks.contains(where: { if case .writable = $0.1 { true } else { false } }) else { return }
        throw DatabaseUnreachable(attempts: checks.map { ($0.0, $0.1.describe(tls: settings.effectiveTLSMode)) })
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
