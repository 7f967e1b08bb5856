import PortcullisCore
import Synchronization

extension Database {
    /// Whether PostgreSQL is believed reachable, read lock-free by every call, and the last
    /// periods it was not.
    ///
    /// The periods are what the refresh tokens' grace window discounts
    /// (`RefreshTokenPolicy`): a rotation whose commit reached the synchronous standby as the
    /// primary froze or crashed was answered 503, so its client presents the rotated token
    /// again once the database is back — after the window, had it kept counting through the
    /// failover, and reuse detection would have ended the session.
    final class Reachability: Sendable {
        /// How many periods are kept: a grace window spans seconds to minutes, and a run
        /// of outages that many is one long outage as far as it is concerned.
        static let kept = 16

        private struct History {
            /// When the current outage began (unix seconds), while there is one.
            var since: Int64?
            /// The ended ones, oldest first; at most ``kept``.
            var periods: [Range<Int64>] = []
        }

        private let reachable = Atomic<Bool>(true)
        private let history = Mutex(History())

        /// Whether PostgreSQL is believed reachable.
        var isReachable: Bool { reachable.load(ordering: .relaxed) }

        /// The ended outages, oldest first, in unix seconds: a period starts on the second
        /// its evidence began and ends on the second after it was over.
        var outages: [Range<Int64>] { history.withLock { $0.periods } }

        /// Records a change: unreachable since `instant` (when the evidence began: a call
        /// that timed out began before its deadline told), or reachable again at `instant`.
        /// The same state twice is one state.
        func set(_ isReachable: Bool, at instant: Timestamp) {
            history.withLock { history in
                guard reachable.exchange(isReachable, ordering: .relaxed) != isReachable else { return }
                if !isReachable {
                    // Periods never overlap: the grace window subtracts each one whole.
                    history.since = max(instant.seconds, history.periods.last?.upperBound ?? instant.seconds)
                } else if let since = history.since {
                    history.since = nil
                    let end = (instant.microseconds + 999_999) / 1_000_000
                    history.periods.append(since..<max(since, end))
                    history.periods.removeFirst(max(0, history.periods.count - Self.kept))
                }
            }
        }
    }
}
