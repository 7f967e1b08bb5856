import Foundation
import Synchronization

/// At most `limit` events per key in a fixed window; a limit of 0 turns it off.
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

    /// Whether `key` has used up its window.
    func isExhausted(_ key: String, now: Int64) -> Bool {
        state.withLock { state in
            guard state.limit > 0, let bucket = state.buckets[key], now - bucket.start < state.window else { return false }
            return bucket.count >= state.limit
        }
    }

    /// Counts one event for `key`.
    func record(_ key: String, now: Int64) {
        state.withLock { state in
            guard state.limit > 0 else { return }
            let window = state.window
            if state.buckets.count >= Self.capacity { state.buckets = state.buckets.filter { now - $0.value.start < window } }
            if let bucket = state.buckets[key], now - bucket.start < window {
                state.buckets[key] = (bucket.start, bucket.count + 1)
            } else {
                state.buckets[key] = (now, 1)
            }
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

    /// Guards with `limits`.
    public init(limits: AbuseLimits = AbuseLimits()) {
        accountFailures = AttemptLimiter(limit: limits.failedSignInsPerAccount, windowSeconds: limits.windowSeconds)
        ipFailures = AttemptLimiter(limit: limits.failedSignInsPerIP, windowSeconds: limits.windowSeconds)
        ipSignUps = AttemptLimiter(limit: limits.signUpsPerIP, windowSeconds: limits.windowSeconds)
    }

    /// Applies new limits; counts in the current windows are kept.
    public func update(_ limits: AbuseLimits) {
        accountFailures.update(limit: limits.failedSignInsPerAccount, windowSeconds: limits.windowSeconds)
        ipFailures.update(limit: limits.failedSignInsPerIP, windowSeconds: limits.windowSeconds)
        ipSignUps.update(limit: limits.signUpsPerIP, windowSeconds: limits.windowSeconds)
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
    /// The window, in seconds.
    public var windowSeconds: Int

    /// DESIGN.md §5's defaults: 10, 100, 100 per 900 s.
    public init(failedSignInsPerAccount: Int = 10, failedSignInsPerIP: Int = 100, signUpsPerIP: Int = 100, windowSeconds: Int = 900) {
        self.failedSignInsPerAccount = failedSignInsPerAccount
        self.failedSignInsPerIP = failedSignInsPerIP
        self.signUpsPerIP = signUpsPerIP
        self.windowSeconds = windowSeconds
    }
}
