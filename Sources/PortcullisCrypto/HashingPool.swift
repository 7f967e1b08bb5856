import Foundation
import NIOPosix

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
public final class HashingPool: Sendable {
    private let threads: NIOThreadPool

    /// Linux's `SCHED_IDLE` (`<linux/sched.h>`; glibc declares it only under `_GNU_SOURCE`,
    /// which Swift's Glibc module does not import).
    static let schedIdle: Int32 = 5

    /// A pool with `threads` workers (default: one per core).
    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.threads = NIOThreadPool(numberOfThreads: max(1, threads))
        self.threads.start()
    }

    deinit {
        // The pool's threads exit once their queue drains; nothing waits for them.
        threads.shutdownGracefully { _ in }
    }

    /// Runs `work` on a pool thread.
    public func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await threads.runIfActive {
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
