public import Foundation
import NIOPosix
import Synchronization

/// Dedicated threads for password hashing, off the event loops, shared fairly between
/// tenants and yielding to the daemon's request threads.
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
/// Half the threads are steady and half yielding (`HashingThreadPriority`). While the rest
/// of the process keeps the CPU busy (`ProcessLoad`: the event loops and request handlers,
/// under a flood of `/v1/verify`), hashes run on the yielding threads alone, so sign-ins take
/// at most half the cores, at a low weight, from the requests that need them; otherwise on
/// every thread, the steady first, at a full share beside other processes. A pool of one
/// thread has no yielding one and never shrinks.
///
/// One *spare* thread beyond those takes only the hash of a tenant with none running, when
/// every other thread is busy: a quiet tenant's sign-in then starts at once beside a flooding
/// tenant's instead of waiting for one of the flood's hashes to end (which doubled its
/// latency). It does so while the foreground is busy too: a newcomer's hash is one request
/// waiting, not a flood, and the yielding thread at nice 6 would otherwise leave it behind
/// the flood's hash in progress. While it runs, no other thread starts a hash once as many
/// run as the pool has threads, so the cores are shared one hash each and the flood keeps
/// the other threads' share rather than crowding the newcomer's hash. The spare's core stays
/// the newcomer's for a moment (`newcomerHold`) after its hash ends: a tenant signing in one
/// request after another is back within a few milliseconds, and a thread the flood freed in
/// that gap would otherwise start a second hash of the flood, which most of the newcomer's
/// next hash then shares two cores with (three hashes). A tenant alone never uses it.
public final class HashingPool: Sendable {
    private let threads: [Role: NIOThreadPool]
    private let state: Mutex<State>
    /// Whether the rest of the process is busy.
    private let load: any ForegroundLoad
    /// The most hashes one tenant may have running or waiting at once.
    public let maximumPendingPerTenant: Int
    /// The most hashes running or waiting at once, every tenant's.
    public let maximumPending: Int

    /// The pool is full for this tenant (or for everyone): the caller should refuse the request now.
    public struct Saturated: Error, Equatable {}

    /// A job of the queue: runs the caller's work on a pool thread of `role` (`run`: `true`),
    /// or reports the pool stopped (`false`).
    private typealias Job = @Sendable (_ run: Bool, _ role: Role) -> Void

    /// What a thread of the pool does, in the order idle threads are woken.
    private enum Role: CaseIterable {
        /// Takes any hash while the foreground is quiet.
        case steady
        /// Takes any hash; the only role that does while the foreground is busy.
        case yielding
        /// Takes only a hash of a tenant with none running, whenever a steady thread may take one.
        case spare

        var priority: HashingThreadPriority { self == .yielding ? .yielding : .steady }
    }

    private struct State {
        let maximumPerTenant: Int
        let maximum: Int
        /// Whether the pool has yielding threads to shrink to.
        let canYield: Bool
        /// Threads other than the spare: the most hashes that run at once unless the spare runs one.
        let regular: Int
        /// Jobs handed to threads and not finished.
        var running = 0
        var queue = FairQueue<String, Job>()
        /// Per tenant: its hashes running or waiting. A tenant with none has no entry.
        var pending: [String: Int] = [:]
        var total = 0
        /// Per role: threads neither running jobs nor woken to.
        var idle: [Role: Int]
        /// Threads woken for a waiting job that have not taken one yet.
        var starting = 0
        /// How long the spare's core stays taken after a newcomer's hash on it ends.
        let newcomerHold: Duration
        /// Until when it is: counted as one more hash running, while the spare is not running one.
        var heldUntil: ContinuousClock.Instant?
        /// When the latest hash ended.
        var lastEnded: ContinuousClock.Instant?

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

        /// A job of `tenant` the queue handed out to a thread of `role` is done (or was dropped
        /// by a stopping pool).
        mutating func finish(_ tenant: String, on role: Role, at now: ContinuousClock.Instant) {
            queue.finished(tenant)
            running -= 1
            total -= 1
            let left = pending[tenant, default: 1] - 1
            pending[tenant] = left > 0 ? left : nil
            if role == .spare { heldUntil = now + newcomerHold }
            lastEnded = now
        }

        /// Whether a thread of `role` may take a job `now`, the foreground `busy` or not.
        func mayRun(_ role: Role, busy: Bool, now: ContinuousClock.Instant) -> Bool {
            let taken = running + (heldUntil.map { now < $0 } == true ? 1 : 0)
            return switch role {
            case .steady: (!canYield || !busy) && taken < regular
            case .yielding: taken < regular
            // A newcomer the threads already woken will take is not the spare's.
            case .spare: queue.newcomers > starting
            }
        }

        /// An idle thread that may take a job no woken thread will, now counted as starting.
        mutating func wake(busy: Bool, now: ContinuousClock.Instant) -> Role? {
            guard queue.count > starting,
                let role = Role.allCases.first(where: { idle[$0, default: 0] > 0 && mayRun($0, busy: busy, now: now) })
            else { return nil }
            idle[role, default: 0] -= 1
            starting += 1
            return role
        }

        /// The next job of a running thread of `role` (`woken`: its first), or `nil`: the
        /// thread is idle again.
        mutating func nextJob(for role: Role, woken: Bool, busy: Bool, now: ContinuousClock.Instant) -> Job? {
            if woken { starting -= 1 }
            if mayRun(role, busy: busy, now: now), let next = queue.next() {
                running += 1
                // The spare runs a hash again: `running` counts its core.
                if role == .spare { heldUntil = nil }
                return next.job
            }
            idle[role, default: 0] += 1
            return nil
        }
    }

    /// A pool with `threads` workers (default: one per core) and the spare, and room for
    /// `maximumPendingPerTenant` hashes of one tenant in flight (default: 32 per thread, about
    /// a second of waiting at the default scrypt cost), yielding to the rest of the process.
    public convenience init(threads: Int = ProcessInfo.processInfo.activeProcessorCount, maximumPendingPerTenant: Int? = nil) {
        self.init(threads: threads, maximumPendingPerTenant: maximumPendingPerTenant, load: ProcessLoad())
    }

    /// A pool yielding to `load`, with a spare thread or (`spare: false`, tests of the queue's
    /// order) without, whose core stays a newcomer's for `newcomerHold` after its hash.
    init(
        threads: Int, maximumPendingPerTenant: Int? = nil, load: any ForegroundLoad, spare: Bool = true,
        newcomerHold: Duration = .milliseconds(20)
    ) {
        let threads = max(1, threads)
        let counts: [Role: Int] = [.yielding: threads / 2, .steady: threads - threads / 2, .spare: spare ? 1 : 0]
        self.threads = counts.filter { $0.value > 0 }.mapValues { NIOThreadPool(numberOfThreads: $0) }
        self.load = load
        self.maximumPendingPerTenant = max(1, maximumPendingPerTenant ?? 32 * threads)
        self.maximumPending = 4 * self.maximumPendingPerTenant
        state = Mutex(
            State(
                maximumPerTenant: self.maximumPendingPerTenant, maximum: maximumPending,
                canYield: threads > 1, regular: threads, idle: counts, newcomerHold: newcomerHold))
        for pool in self.threads.values { pool.start() }
    }

    deinit {
        // The pool's threads exit once their queue drains; nothing waits for them.
        for pool in threads.values { pool.shutdownGracefully { _ in } }
    }

    /// Hashes running or waiting, every tenant's.
    var pending: Int { state.withLock { $0.total } }

    /// Hashes of `tenant` running or waiting.
    func pending(for tenant: String) -> Int { state.withLock { $0.pending[tenant, default: 0] } }

    /// Whether no hash has run or waited for `quiet`, up to `now`.
    ///
    /// What handing freed memory back to the kernel waits for: each hash allocates 16 MiB, and
    /// the first hash after those pages went back faults all of them in again.
    public func isQuiet(for quiet: Duration, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in state.total == 0 && state.lastEnded.map { now - $0 >= quiet } != false }
    }

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
            let job: Job = { run, role in
                let result = run ? Result { try work() } : .failure(CancellationError())
                // Counted out before the caller resumes, so its next hash finds the room.
                let hold = self.state.withLock { state in
                    state.finish(tenant, on: role, at: .now)
                    return role == .spare ? state.newcomerHold : nil
                }
                continuation.resume(with: result)
                // Once the hold ends, the threads it kept idle take the jobs waiting.
                if let hold {
                    Task {
                        try? await Task.sleep(for: hold)
                        self.wakeThreads()
                    }
                }
            }
            guard state.withLock({ $0.admit(job, for: tenant) }) else { return continuation.resume(throwing: Saturated()) }
            wakeThreads()
        }
    }

    /// Wakes idle threads for the waiting jobs, as many as may run now.
    private func wakeThreads() {
        let busy = load.isBusy()
        let now = ContinuousClock.now
        while let role = state.withLock({ $0.wake(busy: busy, now: now) }), let pool = threads[role] {
            pool.submit { workState in self.serve(on: role, active: workState == .active) }
        }
    }

    /// A woken thread of `role`: runs jobs while there are some it may take, then idles.
    private func serve(on role: Role, active: Bool) {
        role.priority.apply()
        BackgroundThreads.adoptCurrent()
        var woken = true
        while true {
            let busy = load.isBusy()
            let now = ContinuousClock.now
            guard let job = state.withLock({ $0.nextJob(for: role, woken: woken, busy: busy, now: now) }) else { break }
            woken = false
            // A thread of another role may run the jobs behind this one (the foreground
            // quietened, or a newcomer waits behind the job this one took).
            wakeThreads()
            job(active, role)
        }
        // Left waiting jobs to another role (the foreground got busy): make sure one runs them.
        wakeThreads()
    }
}
