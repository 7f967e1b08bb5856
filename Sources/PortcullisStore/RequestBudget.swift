import Synchronization

/// The database time one request may still spend, waiting for connections and calls together.
///
/// `database.request_timeout` bounds what a request waits on the database, not how long it
/// queues for a password hash: only the time inside database calls is spent, so a request
/// that makes several calls through a fault still answers within the timeout (plus its own
/// work), and a busy hashing pool never turns into a 503.
public final class RequestBudget: Sendable {
    private let left: Mutex<Duration>

    /// A budget of `total` database time.
    public init(_ total: Duration) {
        left = Mutex(total)
    }

    /// What the next call may take: what is left, at most `limit`.
    func remaining(of limit: Duration) -> Duration {
        min(limit, left.withLock { $0 })
    }

    /// Records time a call took (calls running side by side each spend their own).
    func spend(_ elapsed: Duration) {
        left.withLock { $0 -= elapsed }
    }
}
