import NIOCore
import NIOPosix
import Synchronization

/// Answers within a deadline whatever the work it bounds does.
///
/// The work runs in a task of its own, so its caller can be answered at the deadline even
/// when the work never finishes: postgres-nio 1.33 drops a query written to a connection
/// that closed just after the pool handed it out (the fix, its PR #487, was reverted by
/// #501), and awaiting such a query neither ends nor heeds cancellation. A structured child
/// task could not be abandoned: its group would wait for it. The timer is one scheduled
/// task on an event loop (no task per call), cancelled when the work ends first.
///
/// At the deadline the work is cancelled and `expire` runs (``Database`` closes the
/// connection the work holds, so a query waiting on it fails and the pool replaces it).
enum CallDeadline {
    /// `operation`'s result, or ``Expired`` once `timeout` has passed; the caller's
    /// cancellation cancels the work.
    static func run<Result: Sendable>(
        within timeout: Duration, _ operation: @escaping @Sendable () async throws -> Result,
        expire: @escaping @Sendable () -> Void
    ) async throws -> Result {
        let race = Race<Result>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                race.begin(continuation)
                let work = Task {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(timeout)) {
                    if race.finish(.failure(Expired())) {
                        work.cancel()
                        expire()
                    }
                }
                race.attach(work: work, timer: timer)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The work did not finish in time.
    struct Expired: Error {}

    /// Who answers first: the work, the timer or the caller's cancellation (which may come
    /// before the continuation exists: the outcome then waits for it).
    private final class Race<Result: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result, any Error>?
            var pending: Swift.Result<Result, any Error>?
            var work: Task<Void, Never>?
            var timer: Scheduled<Void>?
            var finished = false
        }

        private let state = Mutex(State())

        func begin(_ continuation: CheckedContinuation<Result, any Error>) {
            let early = state.withLock { state -> Swift.Result<Result, any Error>? in
                guard let pending = state.pending else {
                    state.continuation = continuation
                    return nil
                }
                state.pending = nil
                return pending
            }
            if let early { continuation.resume(with: early) }
        }

        /// Keeps the work and the timer, or stops them at once if the race is already over.
        func attach(work: Task<Void, Never>, timer: Scheduled<Void>) {
            let over = state.withLock { state -> Bool in
                guard !state.finished else { return true }
                state.work = work
                state.timer = timer
                return false
            }
            if over {
                timer.cancel()
                work.cancel()
            }
        }

        /// Answers the caller with `outcome` unless it was answered already; returns whether this did.
        @discardableResult
        func finish(_ outcome: Swift.Result<Result, any Error>) -> Bool {
            let taken = state.withLock { state -> (CheckedContinuation<Result, any Error>?, Task<Void, Never>?, Scheduled<Void>?)? in
                guard !state.finished else { return nil }
                state.finished = true
                if state.continuation == nil { state.pending = outcome }
                defer { state.continuation = nil }
                return (state.continuation, state.work, state.timer)
            }
            guard let (continuation, work, timer) = taken else { return false }
            timer?.cancel()
            if case .failure(let error) = outcome, error is CancellationError { work?.cancel() }
            continuation?.resume(with: outcome)
            return true
        }
    }
}
