import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Dedicated threads for password hashing, off the event loops and below them in priority.
///
/// A flood of sign-ins queues here, never on the NIO event loops; and because
/// the hashing threads run at a lower scheduling priority (nice 10 on Linux),
/// when both compete for the cores token verification wins and hashing takes
/// what is left. Alone, hashing still gets every core: niceness only matters
/// under contention.
public final class HashingPool: Sendable {
    private let threads: NIOThreadPool

    /// How much less priority hashing threads get than the event loops (a nice value).
    static let niceness: Int32 = 10

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

    /// Linux's nice value is per thread, and `who == 0` names the calling thread: this lowers
    /// the pool thread only (idempotent: the value is absolute, not a decrement).
    private static func lowerPriorityOfCurrentThread() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        #endif
    }
}
