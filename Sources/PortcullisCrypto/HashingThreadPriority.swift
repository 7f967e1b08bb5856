import CLinuxScheduling

/// How a hashing thread is scheduled: under the kernel's fair scheduler like every other
/// thread of the host, a little below them (nice 3), and with a long slice.
///
/// Each half answers a different neighbour (DESIGN.md §7; the measurements are BENCHMARKS.md's):
/// - *Other processes* (PostgreSQL under load, a backup, a neighbour's job): a hashing
///   thread gets its share of a busy core, 526/1024 of a nice-0 process's, so beside two
///   CPU-bound processes sign-ins run at about a third of their rate rather than stop.
///   `SCHED_IDLE`, used before, gave them nothing while any other process wanted the core
///   (0 sign-ins a second beside two; 20 s time-outs on a loaded host).
/// - *The daemon's own request threads*: Linux's EEVDF scheduler lets a running thread
///   finish its slice before a woken one runs unless the woken one asks for a shorter slice.
///   A hashing thread asks for the longest the kernel grants (100 ms), so an event loop or
///   request thread waking with the default slice preempts a hash at once, and
///   `/v1/verify`'s p99 under sign-in load stays near its unloaded p99 (1.2–1.4 ×; 1.8 × at
///   the default slice). The nice value is what keeps most of its rate: at nice 0 hashing
///   took its full share from the request threads (0.6 × the unloaded rate), at nice 6 it
///   left them nearly all (0.96 ×) but got a fifth of its rate beside two busy processes.
///
/// Before Linux 6.12 the slice is ignored, and only the nice value applies.
enum HashingThreadPriority {
    /// The hashing threads' nice value.
    static let nice: Int32 = 3
    /// The hashing threads' slice: the kernel's longest.
    static let sliceNanoseconds: UInt64 = 100_000_000

    /// Applies the policy to the calling thread (idempotent; a failure leaves the thread as
    /// it was, which is merely the default's fairness).
    static func apply() {
        _ = c_linux_schedule_fair(nice, sliceNanoseconds)
    }
}
