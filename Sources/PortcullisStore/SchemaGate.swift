import Synchronization

/// Opens once the schema is current: services that need the tables wait on it instead
/// of sleeping a guessed minute while start-up migrations run.
public final class SchemaGate: Sendable {
    private enum State {
        case waiting([Int: CheckedContinuation<Void, Never>], next: Int)
        case open
    }

    private let state = Mutex(State.waiting([:], next: 0))

    /// A closed gate.
    public init() {}

    /// Whether the gate has opened.
    public var isOpen: Bool { state.withLock { if case .open = $0 { true } else { false } } }

    /// Opens the gate, releasing every waiter (idempotent).
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard case .waiting(let waiters, _) = state else { return [] }
            state = .open
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open, or at once when the calling task is cancelled
    /// (check `Task.isCancelled` after it).
    public func wait() async {
        let id = state.withLock { state -> Int in
            guard case .waiting(let waiters, let next) = state else { return -1 }
            state = .waiting(waiters, next: next + 1)
            return next
        }
        guard id >= 0 else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    guard case .waiting(var waiters, let next) = state, !Task.isCancelled else { return true }
                    waiters[id] = continuation
                    state = .waiting(waiters, next: next)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard case .waiting(var waiters, let next) = state else { return nil }
                let waiter = waiters.removeValue(forKey: id)
                state = .waiting(waiters, next: next)
                return waiter
            }
            waiter?.resume()
        }
    }
}
