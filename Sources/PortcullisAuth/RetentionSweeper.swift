public import Logging
public import PortcullisCore
public import PortcullisStore
public import ServiceLifecycle

/// Deletes what can never be used again once it has been so a while: dead refresh sessions,
/// spent email action codes and finished outbox messages. Each is a row written per sign-in
/// or per email and would otherwise live as long as its user (or forever).
///
/// - A session is dead when revoked (reuse detected) or issued before the user's
///   `validSince` (password change, revocation, disabling). It is kept for `retention` after
///   its last rotation, so its tokens keep getting their precise answer
///   (`INVALID_REFRESH_TOKEN`, `TOKEN_EXPIRED`) for that long; after it, the tokens get
///   `INVALID_REFRESH_TOKEN`, which clients treat the same way: sign in again. Live sessions
///   never expire, as in Firebase.
/// - An action code is spent when used or expired. It is kept for `retention` after that, so
///   an expired link answers `EXPIRED_OOB_CODE` (later, `INVALID_OOB_CODE`, as a used one
///   does), and always for the hour the per-user flood limit counts codes over.
/// - An outbox message is finished when delivered or given up on (its link is wiped at that
///   moment). It is kept for `retention`, so operators can see what was sent and what failed.
public struct RetentionSweeper: Service {
    let sessions: RefreshSessionRepository
    let actionCodes: ActionCodeRepository
    let outbox: EmailOutboxRepository
    let retention: Duration
    let interval: Duration
    let batchSize: Int
    let clock: any WallClock
    let schema: SchemaGate
    let logger: Logger

    /// What one pass deleted.
    public struct Swept: Equatable, Sendable {
        /// Dead refresh sessions.
        public var sessions: Int
        /// Spent action codes.
        public var actionCodes: Int
        /// Finished outbox messages.
        public var messages: Int

        /// A count of each.
        public init(sessions: Int = 0, actionCodes: Int = 0, messages: Int = 0) {
            self.sessions = sessions
            self.actionCodes = actionCodes
            self.messages = messages
        }
    }

    /// A sweeper that runs every `interval` and keeps what it deletes for `retention`; each
    /// statement deletes up to `batchSize` codes or messages, or examines `batchSize` sessions.
    public init(
        sessions: RefreshSessionRepository, actionCodes: ActionCodeRepository, outbox: EmailOutboxRepository,
        retention: Duration = .seconds(30 * 86_400), interval: Duration = .seconds(3600), batchSize: Int = 1000,
        clock: any WallClock, schema: SchemaGate, logger: Logger
    ) {
        self.sessions = sessions
        self.actionCodes = actionCodes
        self.outbox = outbox
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
                await sweep(now: clock.now())
                do { try await Task.sleep(for: interval) } catch { return }
            }
        }
    }

    /// One pass over each kind of row. Failures are logged and retried at the next pass; one
    /// kind failing does not keep the others from being swept.
    @discardableResult
    public func sweep(now: Timestamp) async -> Swept {
        let cutoff = now.adding(seconds: -retention.components.seconds)
        var swept = Swept()
        // Sessions are walked range by range, so a pass reads each once however few are dead.
        var cursor: RefreshSessionRepository.SweepCursor?
        swept.sessions = await inBatches("dead refresh sessions") {
            let (deleted, next) = try await sessions.deleteDeadSessions(after: cursor, rotatedBefore: cutoff.seconds, limit: batchSize)
            cursor = next
            return (deleted, next != nil)
        }
        swept.actionCodes = await inBatches("spent action codes") {
            let deleted = try await actionCodes.deleteSpentCodes(before: cutoff, now: now, limit: batchSize)
            return (deleted, deleted == batchSize)
        }
        swept.messages = await inBatches("finished outbox messages") {
            let deleted = try await outbox.deleteFinished(before: cutoff, limit: batchSize)
            return (deleted, deleted == batchSize)
        }
        return swept
    }

    /// Deletes in batches (short transactions, short row locks) while a batch says there is more,
    /// resting after each as long as it took: a pass over millions of sessions takes minutes of
    /// database time, and paced it never holds more than half of a connection's (and of a core)
    /// from the requests beside it.
    private func inBatches(_ what: String, _ deleteBatch: () async throws -> (deleted: Int, more: Bool)) async -> Int {
        var total = 0
        do {
            while !Task.isCancelled {
                let started = ContinuousClock.now
                let (deleted, more) = try await deleteBatch()
                total += deleted
                if !more { break }
                try await Task.sleep(for: ContinuousClock.now - started)
            }
        } catch is CancellationError {
            // Shutting down mid-pass: the next start sweeps again.
        } catch {
            logger.warning("sweeping \(what) failed; it runs again at the next pass")
        }
        if total > 0 { logger.info("deleted \(what)", metadata: ["count": "\(total)"]) }
        return total
    }
}
