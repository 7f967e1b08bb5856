import Synchronization

/// Wakes one waiting background loop early: `ring()` from anywhere, `wait(timeout:)` in
/// the loop. A ring while nobody waits is kept for the next wait, so none is lost.
/// `stop()` rings for good: the loop finishes what it is doing and ends.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var stopped = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Whether ``stop()`` was called.
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Wakes the waiter, and makes every later wait return at once.
    func stop() {
        state.withLock { $0.stopped = true }
        ring()
    }

    /// Wakes the waiter, or the next one.
    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns after a ring (one that came since the last wait counts), after `timeout`, or
    /// when the calling task is cancelled.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Cancelled when the ring came first: then it must not ring again.
                do {
                    try await Task.sleep(for: timeout)
                    self.ring()
                } catch {}
            }
            group.addTask { await self.waitForRing() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForRing() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung || state.stopped || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
