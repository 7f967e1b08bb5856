import CLinuxScheduling

/// How a hashing thread is scheduled: under the kernel's fair scheduler like every other
/// thread of the host, with a long slice, and at one of two nice values. Half the pool's
/// threads are *steady*, the other half *yielding*; `HashingPool` hashes on the yielding ones
/// alone while the daemon's request threads are busy.
///
/// Each neighbour a hash competes with is answered differently (DESIGN.md §7; the
/// measurements are BENCHMARKS.md's):
/// - *Other processes* (PostgreSQL under load, a backup, a neighbour's job): the steady
///   threads get a nice-0 share of a busy core, so beside two CPU-bound processes sign-ins keep
///   about two fifths of their rate. `SCHED_IDLE`, used before, gave them nothing while any other
///   process wanted the core (0 sign-ins a second beside two; 20 s time-outs on a loaded host).
/// - *The daemon's own request threads* (a flood of `/v1/verify` beside the sign-ins): the
///   pool then hashes on the yielding threads only, at nice 6 (a quarter of a nice-0 thread's
///   weight). One nice value for every thread traded one neighbour for the other (at nice 0
///   verify kept 0.6 × its rate, at nice 6 sign-ins beside two busy processes kept a fifth of
///   theirs). What verify still loses, a quarter of its rate, is not CPU time: the yielding
///   thread still hashes about 25 times a second on what the request threads leave idle
///   (they wait on the network too), and each hash sweeps 16 MiB through the cache the cores
///   share, which no priority avoids.
/// - *Latency*: Linux's EEVDF scheduler lets a running thread finish its slice before a woken
///   one runs unless the woken one asks for a shorter slice. A hashing thread asks for the
///   longest the kernel grants (100 ms), so an event loop waking with the default slice
///   preempts a hash at once (verify's p99 under sign-in load 1.2–1.4 × unloaded, against
///   1.8 × at the default slice). Before Linux 6.12 the slice is ignored.
enum HashingThreadPriority: CaseIterable, Sendable {
    /// Hashes at a nice-0 thread's share: the pool's threads while the request threads are quiet.
    case steady
    /// Hashes at nice 6: the only threads the pool hashes on while the request threads are busy.
    case yielding

    /// The thread's nice value.
    var nice: Int32 {
        switch self {
        case .steady: 0
        case .yielding: 6
        }
    }

    /// Every hashing thread's slice: the kernel's longest.
    static let sliceNanoseconds: UInt64 = 100_000_000

    /// Applies the policy to the calling thread (idempotent; a failure leaves the thread as
    /// it was, which is merely the default's fairness).
    func apply() {
        _ = c_linux_schedule_fair(nice, Self.sliceNanoseconds)
    }
}
