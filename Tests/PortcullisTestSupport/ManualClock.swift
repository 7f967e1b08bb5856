public import PortcullisCore
import Synchronization

/// A clock the test sets: services built with it read this time, so time rules are
/// tested by moving the clock rather than by sleeping.
public final class ManualClock: WallClock {
    private let time: Mutex<Timestamp>

    /// A clock showing `start` (default: the system's time now).
    public init(_ start: Timestamp = SystemClock().now()) {
        time = Mutex(start)
    }

    public func now() -> Timestamp { time.withLock { $0 } }

    /// Time passes at once: the clock moves to `instant` unless it shows a later time.
    public func sleep(until instant: Timestamp) async throws {
        time.withLock { $0 = max($0, instant) }
    }

    /// Moves the clock to `instant`.
    public func set(_ instant: Timestamp) { time.withLock { $0 = instant } }

    /// Moves the clock forward by `seconds`.
    public func advance(seconds: Int64) { time.withLock { $0 = $0.adding(seconds: seconds) } }
}
