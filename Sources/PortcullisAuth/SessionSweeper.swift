public import Logging
public import PortcullisCore
public import PortcullisStore
public import ServiceLifecycle

/// Deletes refresh sessions that can never refresh again once they have been dead a
/// while: a session row is written per sign-in and would otherwise live as long as
/// its user.
///
/// Dead means revoked (reuse detected) or issued before the user's `validSince`
/// (password change, revocation, disabling). Such a session is kept for `retention`
/// after its last rotation, so its tokens keep getting their precise answer
/// (`INVALID_REFRESH_TOKEN`, `TOKEN_EXPIRED`) for that long; after it, the tokens get
/// `INVALID_REFRESH_TOKEN`, which clients treat the same way: sign in again. Live
/// sessions never expire, as in Firebase.
public struct SessionSweeper: Service {
    let sessions: RefreshSessionRepository
    let retention: Duration
    let interval: Duration
    let batchSize: Int
    let clock: any WallClock
    let schema: SchemaGate
    let logger: Logger

    /// A sweeper that runs every `interval` and keeps dead sessions for `retention`.
    public init(
        sessions: RefreshSessionRepository, retention: Duration = .seconds(30 * 86_400),
        interval: Duration = .seconds(3600), batchSize: Int = 1000, clock: any WallClock = SystemClock(),
        schema: SchemaGate, logger: Logger
    ) {
        self.sessions = sessions
        self.retention = retention
        self.interval = interval
        self.batchSize = batchSize
        self.clock = clock
        self.schema = schema
        self.logger = logger
    }

    /// Sweeps every `interval` until graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            // The first pass runs as soon as the schema is current, then every `interval`.
            await schema.wait()
            while !Task.isCancelled {
                await sweep(now: clock.now().seconds)
                do { try await Task.sleep(for: interval) } catch { return }
            }
        }
    }

    /// One pass: deletes in batches (short transactions, short row locks) until a batch
    /// comes back short. Failures are logged and retried at the next pass.
    /// - Returns: how many sessions were deleted.
    @discardableResult
    public func sweep(now: Int64) async -> Int {
        var total = 0
        do {
            while !Task.isCancelled {
                let deleted = try await sessions.deleteDeadSessions(
                    rotatedBefore: now - retention.components.seconds, limit: batchSize)
                total += deleted
                if deleted < batchSize { break }
            }
        } catch {
            logger.warning("session sweep failed; it runs again at the next pass")
        }
        if total > 0 { logger.info("deleted dead refresh sessions", metadata: ["count": "\(total)"]) }
        return total
    }
}
