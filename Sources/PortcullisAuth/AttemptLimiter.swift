import Foundation
import Synchronization

/// At most `limit` events per key in a fixed window; a limit of 0 turns it off.
///
/// Attempts are counted before the work they guard (a password hash), and taken back
/// when they turn out not to be failures, so a burst of concurrent guesses gets no more
/// than `limit` through.
final class AttemptLimiter: Sendable {
    private struct State {
        var limit: Int
        var window: Int64
        var buckets: [String: (start: Int64, count: Int)] = [:]
    }

    private let state: Mutex<State>
    static let capacity = 200_000

    init(limit: Int, windowSeconds: Int) {
        state = Mutex(State(limit: limit, window: Int64(max(1, windowSeconds))))
    }

    func update(limit: Int, windowSeconds: Int) {
        state.withLock {
            $0.limit = limit
            $0.window = Int64(max(1, windowSeconds))
        }
    }

    /// Counts one event for `key` unless its window is used up; returns whether it was counted.
    ///
    /// Check and count are one step under the lock: concurrent attempts cannot all pass a
    /// check made before any of them is counted.
    func consume(_ key: String, now: Int64) -> Bool {
        state.withLock { state in
            guard state.limit > 0 else { return true }
            let window = state.window
            if state.buckets.count >= Self.capacity { state.buckets = state.buckets.filter { now - $0.value.start < window } }
            guard let bucket = state.buckets[key], now - bucket.start < window else {
                state.buckets[key] = (now, 1)
                return true
            }
            guard bucket.count < state.limit else { return false }
            state.buckets[key] = (bucket.start, bucket.count + 1)
            return true
        }
    }

    /// Takes back an event ``consume(_:now:)`` counted (the attempt turned out not to be a failure).
    func refund(_ key: String, now: Int64) {
        state.withLock { state in
            guard state.limit > 0, let bucket = state.buckets[key], now - bucket.start < state.window else { return }
            state.buckets[key] = (bucket.start, max(0, bucket.count - 1))
        }
    }
}

/// The abuse limits of DESIGN.md §5, enforced per instance and in memory:
/// behind a load balancer each instance enforces its own share, bounding an
/// attacker to `limit × instances` per window. Changeable at run time (SIGHUP).
public final class AbuseGuard: Sendable {
    let accountFailures: AttemptLimiter
    let ipFailures: AttemptLimiter
    let ipSignUps: AttemptLimiter
    let ipEmailActions: AttemptLimiter

    /// Guards with `limits`.
    public init(limits: AbuseLimits = AbuseLimits()) {
        accountFailures = AttemptLimiter(limit: limits.failedSignInsPerAccount, windowSeconds: limits.windowSeconds)
        ipFailures = AttemptLimiter(limit: limits.failedSignInsPerIP, windowSeconds: limits.windowSeconds)
        ipSignUps = AttemptLimiter(limit: limits.signUpsPerIP, windowSeconds: limits.windowSeconds)
        ipEmailActions = AttemptLimiter(limit: limits.emailActionsPerIP, windowSeconds: limits.windowSeconds)
    }

    /// Counts a password attempt against the account and the client address before its hash
    /// is computed; `false` (nothing counted) when either has used up its window.
    func beginSignIn(account: String, client: String?, now: Int64) -> Bool {
        guard accountFailures.consume(account, now: now) else { return false }
        if let client, !ipFailures.consume(client, now: now) {
            accountFailures.refund(account, now: now)
            return false
        }
        return true
    }

    /// Takes back an attempt counted by ``beginSignIn(account:client:now:)`` that was not a
    /// failed guess: the password was right, or it was never checked.
    func refundSignIn(account: String, client: String?, now: Int64) {
        accountFailures.refund(account, now: now)
        if let client { ipFailures.refund(client, now: now) }
    }

    /// Applies new limits; counts in the current windows are kept.
    public func update(_ limits: AbuseLimits) {
        accountFailures.update(limit: limits.failedSignInsPerAccount, windowSeconds: limits.windowSeconds)
        ipFailures.update(limit: limits.failedSignInsPerIP, windowSeconds: limits.windowSeconds)
        ipSignUps.update(limit: limits.signUpsPerIP, windowSeconds: limits.windowSeconds)
        ipEmailActions.update(limit: limits.emailActionsPerIP, windowSeconds: limits.windowSeconds)
    }
}

/// The configured abuse limits.
public struct AbuseLimits: Sendable, Equatable {
    /// Failed password sign-ins per (tenant, email) per window.
    public var failedSignInsPerAccount: Int
    /// Failed password sign-ins per client IP per window.
    public var failedSignInsPerIP: Int
    /// Sign-ups per client IP per window.
    public var signUpsPerIP: Int
    /// End users' `accounts:sendOobCode` requests per client IP per window (each may send a
    /// message: the per-user flood limit protects one inbox, this one the sender's reputation
    /// from a client mailing many addresses).
    public var emailActionsPerIP: Int
    /// The window, in seconds.
    public var windowSeconds: Int

    /// DESIGN.md §5's defaults: 10, 100, 100 per 900 s; and 100 email actions.
    public init(
        failedSignInsPerAccount: Int = 10, failedSignInsPerIP: Int = 100, signUpsPerIP: Int = 100, emailActionsPerIP: Int = 100,
        windowSeconds: Int = 900
    ) {
        self.failedSignInsPerAccount = failedSignInsPerAccount
        self.failedSignInsPerIP = failedSignInsPerIP
        self.signUpsPerIP = signUpsPerIP
        self.emailActionsPerIP = emailActionsPerIP
        self.windowSeconds = windowSeconds
    }
}
