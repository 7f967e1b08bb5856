public import Logging
import PostgresNIO
public import ServiceLifecycle

/// Keeps every subscriber's cache coherent with the database.
///
/// Leases one pool connection for as long as it lives and `LISTEN`s on
/// ``InvalidationEvent/channel``; when that connection drops it leases another
/// with backoff and flushes every cache (events may have been missed meanwhile).
/// A periodic full flush is the safety net for anything still missed.
///
/// Its connection is also the database's canary: losing it marks the database
/// unreachable (requests fail fast, see ``Database``), listening again marks it back.
public struct InvalidationListener: Service {
    let database: Database
    let subscribers: [any InvalidationSubscriber]
    let fullRefreshInterval: Duration
    let logger: Logger

    /// A listener feeding `subscribers`.
    public init(
        database: Database, subscribers: [any InvalidationSubscriber],
        fullRefreshInterval: Duration = .seconds(60), logger: Logger
    ) {
        self.database = database
        self.subscribers = subscribers
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
            flushAll()
        }
    }

    private func flushAll() {
        for subscriber in subscribers { subscriber.invalidateAll() }
    }

    private func listenLoop() async {
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.listen(on: InvalidationEvent.channel) { notifications in
                        // Anything cached before LISTEN took effect may be stale.
                        flushAll()
                        database.setReachable(true)
                        backoff = .milliseconds(100)
                        logger.debug("listening for invalidations")
                        for try await notification in notifications {
                            guard let event = InvalidationEvent(payload: notification.payload) else {
                                logger.warning("ignoring unknown invalidation", metadata: ["payload": "\(notification.payload)"])
                                continue
                            }
                            for subscriber in subscribers { subscriber.invalidate(event) }
                        }
                    }
                }
            } catch {
                if !Task.isCancelled {
                    database.setReachable(false)
                    logger.warning("invalidation listener lost its connection: \(error)")
                }
            }
            flushAll()
            do { try await Task.sleep(for: backoff) } catch { return }
            backoff = min(backoff * 2, .seconds(5))
        }
    }
}
