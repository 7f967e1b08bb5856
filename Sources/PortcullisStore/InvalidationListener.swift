public import Logging
import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// Keeps this instance's caches (``Database/subscribers``) coherent with the database.
///
/// Leases one connection of the current pool (``Database/pool()``) for as long as it lives
/// and `LISTEN`s on ``InvalidationEvent/channel``; when that connection drops it tells the
/// database (which checks whether its server is gone), leases another with a short
/// backoff, from the new pool when there is one, and flushes every cache once it listens
/// again (events may have been missed meanwhile). A periodic full flush is the safety net for anything still missed.
///
/// Through an outage, the caches that forward auth verifies with are kept
/// (``InvalidationSubscriber/keptThroughOutage``): `/v1/verify` goes on answering
/// from them, while every request that needs the database answers 503.
///
/// Its connection is also the database's canary: losing it marks the database
/// unreachable (requests fail fast, see ``Database``), listening again marks it back.
public struct InvalidationListener: Service {
    let database: Database
    let fullRefreshInterval: Duration
    let logger: Logger

    /// A listener feeding `database`'s subscribers.
    public init(database: Database, fullRefreshInterval: Duration = .seconds(60), logger: Logger) {
        self.database = database
        self.fullRefreshInterval = fullRefreshInterval
        self.logger = logger
    }

    /// Runs until graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.listenLoop() }
                group.addTask { await self.refreshLoop() }
            }
        }
    }

    private func refreshLoop() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: fullRefreshInterval) } catch { return }
            // Through an outage nothing can be missed that reconnecting does not flush.
            if database.isReachable { flushAll() }
        }
    }

    private func flushAll() {
        database.subscribers.invalidateAll()
    }

    /// The connection's life as the log tells it: one line per change of state (lost,
    /// retrying, back), naming the server and the reason, however long the outage lasts.
    private final class Outage: Sendable {
        private struct State {
            var since: ContinuousClock.Instant?
            var failures = 0
        }

        private let state = Mutex(State())

        /// Records a failure on `server` (nil: before any pool); the lines it deserves are
        /// logged (the first two of an outage).
        func failed(_ error: any Error, server: DatabaseSettings.Endpoint?, logger: Logger) {
            let (failures, started) = state.withLock { state -> (Int, Bool) in
                let started = state.since == nil
                if started { state.since = .now }
                state.failures += 1
                return (state.failures, started)
            }
            var metadata = DatabaseErrors.describe(error)
            metadata["database"] = "\(server.map { "\($0)" } ?? "none yet")"
            if started {
                logger.error("lost the connection to PostgreSQL; requests answer 503 UNAVAILABLE until it is back", metadata: metadata)
            } else if failures == 2 {
                logger.warning("PostgreSQL is still unreachable; retrying, backing off to every 0.5 s", metadata: metadata)
            } else {
                logger.debug("PostgreSQL is still unreachable", metadata: metadata)
            }
        }

        /// Records that listening works again, on `server`; logs how long the outage lasted, if there was one.
        func recovered(server: DatabaseSettings.Endpoint, logger: Logger) {
            let since = state.withLock { state -> ContinuousClock.Instant? in
                defer { state = State() }
                return state.since
            }
            guard let since else { return }
            logger.notice(
                "PostgreSQL is back; requests are served again",
                metadata: [
                    "database": "\(server)", "outage": "\(ContinuousClock.now - since)",
                ])
        }
    }

    private func listenLoop() async {
        var backoff = Duration.milliseconds(100)
        let outage = Outage()
        while !Task.isCancelled {
            // Waits while the database looks for the server that accepts writes.
            var pool: Database.Pool?
            do {
                let current = try await database.pool()
                pool = current
                try await current.client.withConnection { connection in
                    try await connection.listen(on: InvalidationEvent.channel) { notifications in
                        // Anything cached before LISTEN took effect may be stale.
                        flushAll()
                        database.setReachable(true)
                        outage.recovered(server: current.endpoint, logger: logger)
                        backoff = .milliseconds(100)
                        logger.debug("listening for invalidations")
                        for try await notification in notifications {
                            guard let event = InvalidationEvent(payload: notification.payload) else {
                                logger.warning("ignoring unknown invalidation", metadata: ["payload": "\(notification.payload)"])
                                continue
                            }
                            database.subscribers.deliver([event])
                        }
                    }
                }
            } catch {
                if !Task.isCancelled {
                    outage.failed(error, server: pool?.endpoint, logger: logger)
                    // The database asks the server whether it is gone, and finds another if so.
                    if let pool { database.listenerLost(pool) }
                }
            }
            database.subscribers.invalidateAll(lostConnection: true)
            do { try await Task.sleep(for: backoff) } catch { return }
            // Short: a new pool may be waiting, and requests answer 503 until this listens again.
            backoff = min(backoff * 2, .milliseconds(500))
        }
    }
}
