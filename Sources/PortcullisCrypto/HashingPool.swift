public import Foundation
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Dedicated threads for password hashing, off the event loops and below them in priority.
///
/// A flood of sign-ins queues here, never on the NIO event loops; and because the
/// hashing threads run under Linux's `SCHED_IDLE` policy, any event-loop or request
/// thread that wakes up takes the core from them at once, so token verification keeps
/// its latency while sign-ins saturate the pool. Alone, hashing still gets every core.
///
/// `SCHED_IDLE` rather than a nice value: the kernel's EEVDF scheduler lets a running
/// thread finish its time slice (~3 ms) before a woken one of higher priority runs,
/// whatever the nice values, which doubled `/v1/verify`'s p99 under sign-in load; an
/// idle-policy thread is preempted on every wakeup (BENCHMARKS.md). The price: while
/// other work saturates every core, sign-ins wait for it.
///
/// The queue is bounded: at most `maximumPending` hashes run or wait at once, and
/// one more is refused at once with ``Saturated`` rather than queued, so a flood
/// gets fast refusals instead of ever-growing waits (and memory).
public final class HashingPool: Sendable {
    private let threads: NIOThreadPool
    private let pending = Atomic<Int>(0)
    /// The most hashes running or waiting at once.
    public let maximumPending: Int

    /// The pool is full: the caller should refuse the request now.
    public struct Saturated: Error, Equatable {}

    /// Linux's `SCHED_IDLE` (`<linux/sched.h>`; glibc declares it only under `_GNU_SOURCE`,
    /// which Swift's Glibc module does not import).
    static let schedIdle: Int32 = 5

    /// A pool with `threads` workers (default: one per core) and room for `maximumPending`
    /// hashes in flight (default: 32 per thread, about a second of waiting at the default
    /// scrypt cost).
    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount, maximumPending: Int? = nil) {
        let threads = max(1, threads)
        self.threads = NIOThreadPool(numberOfThreads: threads)
        self.maximumPending = max(1, maximumPending ?? 32 * threads)
        self.threads.start()
    }

    deinit {
        // The pool's threads exit once their queue drains; nothing waits for them.
        threads.shutdownGracefully { _ in }
    }

    /// Runs `work` on a pool thread; ``Saturated`` at once when `maximumPending` are in flight.
    public func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        guard pending.wrappingAdd(1, ordering: .relaxed).newValue <= maximumPending else {
            pending.subtract(1, ordering: .relaxed)
            throw Saturated()
        }
        defer { pending.subtract(1, ordering: .relaxed) }
        return try await threads.runIfActive {
            Self.lowerPriorityOfCurrentThread()
            return try work()
        }
    }

    /// Linux's scheduling policy is per thread, and pid 0 names the calling thread: this
    /// lowers the pool thread only (idempotent).
    private static func lowerPriorityOfCurrentThread() {
        #if os(Linux)
        var parameters = sched_param(sched_priority: 0)
        _ = sched_setscheduler(0, schedIdle, &parameters)
        #endif
    }
}
