public import Foundation
import NIOPosix
import Synchronization

/// Dedicated threads for password hashing, off the event loops, shared fairly between
/// tenants and below the request threads in priority.
///
/// A flood of sign-ins queues here, never on the NIO event loops. The queue is per tenant
/// (`FairQueue`): a free thread takes the next hash of the tenant with the fewest running,
/// in turn among equals, so a tenant flooding sign-ins gets no more threads than another
/// while both wait, the other's sign-ins keep their latency, and a tenant alone gets the
/// whole pool.
///
/// The queue is bounded: at most `maximumPendingPerTenant` hashes of one tenant, and four
/// times as many of every tenant's, run or wait at once; one more is refused at once with
/// ``Saturated`` rather than queued, so a flood gets fast refusals instead of ever-growing
/// waits (and memory), and the tenant that floods is the one refused.
///
/// The hashing threads' scheduling is `HashingThreadPriority`'s.
public final class HashingPool: Sendable {
    private let threads: NIOThreadPool
    private let state: Mutex<State>
    /// The most hashes one tenant may have running or waiting at once.
    public let maximumPendingPerTenant: Int
    /// The most hashes running or waiting at once, every tenant's.
    public let maximumPending: Int

    /// The pool is full for this tenant (or for everyone): the caller should refuse the request now.
    public struct Saturated: Error, Equatable {}

    /// A job of the queue: runs the caller's work on a pool thread (`true`), or reports the
    /// pool stopped (`false`).
    private typealias Job = @Sendable (_ run: Bool) -> Void

    private struct State {
        let maximumPerTenant: Int
        let maximum: Int
        var queue = FairQueue<String, Job>()
        /// Per tenant: its hashes running or waiting. A tenant with none has no entry.
        var pending: [String: Int] = [:]
        var total = 0

        func hasRoom(for tenant: String) -> Bool {
            total < maximum && pending[tenant, default: 0] < maximumPerTenant
        }

        /// Queues `job` if `tenant` has room.
        mutating func admit(_ job: @escaping Job, for tenant: String) -> Bool {
            guard hasRoom(for: tenant) else { return false }
            pending[tenant, default: 0] += 1
            total += 1
            queue.append(job, for: tenant)
            return true
        }

        /// A job of `tenant` the queue handed out is done (or was dropped by a stopping pool).
        mutating func finish(_ tenant: String) {
            queue.finished(tenant)
            total -= 1
            let left = pending[tenant, default: 1] - 1
            pending[tenant] = left > 0 ? left : nil
        }
    }

    /// A pool with `threads` workers (default: one per core) and room for
    /// `maximumPendingPerTenant` hashes of one tenant in flight (default: 32 per thread, about
    /// a second of waiting at the default scrypt cost).
    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount, maximumPendingPerTenant: Int? = nil) {
        let threads = max(1, threads)
        self.threads = NIOThreadPool(numberOfThreads: threads)
        self.maximumPendingPerTenant = max(1, maximumPendingPerTenant ?? 32 * threads)
        self.maximumPending = 4 * self.maximumPendingPerTenant
        state = Mutex(State(maximumPerTenant: self.maximumPendingPerTenant, maximum: maximumPending))
        self.threads.start()
    }

    deinit {
        // The pool's threads exit once their queue drains; nothing waits for them.
        threads.shutdownGracefully { _ in }
    }

    /// Hashes running or waiting, every tenant's.
    var pending: Int { state.withLock { $0.total } }

    /// Hashes of `tenant` running or waiting.
    func pending(for tenant: String) -> Int { state.withLock { $0.pending[tenant, default: 0] } }

    /// Whether `tenant` may queue one more hash now: a caller with work to do before its hash
    /// (a sign-in's lookup) asks first, so a flooding tenant's surplus is refused before it
    /// costs anything. ``run(for:_:)`` still decides.
    public func hasRoom(for tenant: String) -> Bool {
        state.withLock { $0.hasRoom(for: tenant) }
    }

    /// Runs `work` on a pool thread in `tenant`'s turn (a tenant's key: `TenantScope.key`);
    /// ``Saturated`` at once when the tenant, or the pool, has its most hashes in flight.
    public func run<Value: Sendable>(
        for tenant: String, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let job: Job = { run in
                let result =
                    run
                    ? Result {
                        HashingThreadPriority.apply(); return try work()
                    } : .failure(CancellationError())
                // Counted out before the caller resumes, so its next hash finds the room.
                self.state.withLock { $0.finish(tenant) }
                continuation.resume(with: result)
            }
            guard state.withLock({ $0.admit(job, for: tenant) }) else { return continuation.resume(throwing: Saturated()) }
            // One work item per queued job; each runs whichever job's turn it is when a thread takes it.
            threads.submit { workState in
                guard let next = self.state.withLock({ $0.queue.next() }) else { return }
                next.job(workState == .active)
            }
        }
    }
}
