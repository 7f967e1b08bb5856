import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the hashing pool yields to: whether the process's foreground — its event loops and
/// request handlers — is keeping the CPU busy.
protocol ForegroundLoad: Sendable {
    /// Whether the foreground is busy now.
    func isBusy() -> Bool
}

/// The foreground as the kernel accounts it: the process's CPU time less its background
/// threads' (``BackgroundThreads``), busy when that came to at least a quarter of the host's
/// cores over the last window.
///
/// CPU time rather than requests in flight: a `/v1/verify` flood keeps both event loops busy
/// with two requests in flight at a time (each is answered without waiting), while a sign-in
/// flood has dozens in flight, waiting for their hashes.
final class ProcessLoad: ForegroundLoad {
    /// The shortest stretch a reading covers: a few hashes' worth, so one reading is no noise.
    static let window: Duration = .milliseconds(50)
    /// The foreground's CPU, in cores, from which it is busy.
    let busyCores: Double
    private let state = Mutex<(last: Reading?, busy: Bool)>((nil, false))

    private struct Reading {
        let at: ContinuousClock.Instant
        let process: Int64
        let background: Int64
    }

    /// Busy from `busyCores` of foreground CPU (default: a quarter of the host's cores).
    init(busyCores: Double = Double(ProcessInfo.processInfo.activeProcessorCount) / 4) {
        self.busyCores = busyCores
    }

    func isBusy() -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let last = state.last, now - last.at < Self.window { return state.busy }
            guard let process = cpuNanoseconds(CLOCK_PROCESS_CPUTIME_ID) else { return false }
            let reading = Reading(at: now, process: process, background: BackgroundThreads.cpuTime())
            if let last = state.last {
                let foreground = Double((reading.process - last.process) - (reading.background - last.background))
                let elapsed = (now - last.at).components
                state.busy = foreground >= busyCores * (Double(elapsed.seconds) * 1e9 + Double(elapsed.attoseconds) / 1e9)
            }
            state.last = reading
            return state.busy
        }
    }
}

/// The process's background threads — hashing, and keys made ahead — whose CPU time is not
/// the foreground's (``ProcessLoad``).
enum BackgroundThreads {
    private struct Thread {
        /// Its CPU time when adopted, which was spent before it was a background thread.
        let adopted: Int64
        /// Its CPU time when last read.
        var seen: Int64
    }

    /// The threads by CPU-time clock (which names the kernel's thread, where a `pthread_t` may
    /// be reused by a later thread), and the CPU time of those that ended.
    private static let threads = Mutex<(live: [clockid_t: Thread], ended: Int64)>(([:], 0))

    /// Counts the calling thread as a background thread (idempotent).
    static func adoptCurrent() {
        var clock = clockid_t()
        guard pthread_getcpuclockid(pthread_self(), &clock) == 0 else { return }
        threads.withLock { threads in
            guard threads.live[clock] == nil, let now = cpuNanoseconds(clock) else { return }
            threads.live[clock] = Thread(adopted: now, seen: now)
        }
    }

    /// Their CPU time since each was adopted, in nanoseconds: never decreases. A thread whose
    /// clock cannot be read any more (it ended with its pool) counts as last read.
    static func cpuTime() -> Int64 {
        threads.withLock { threads in
            var total = threads.ended
            for (clock, thread) in threads.live {
                guard let now = cpuNanoseconds(clock) else {
                    threads.ended += thread.seen - thread.adopted
                    total += thread.seen - thread.adopted
                    threads.live[clock] = nil
                    continue
                }
                threads.live[clock]?.seen = now
                total += now - thread.adopted
            }
            return total
        }
    }
}

/// `clock`'s time in nanoseconds (a CPU-time clock: the process's, or a thread's).
private func cpuNanoseconds(_ clock: clockid_t) -> Int64? {
    var time = timespec()
    guard clock_gettime(clock, &time) == 0 else { return nil }
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
