import Logging
import PortcullisCore
public import PostgresNIO
import Synchronization

extension Database {
    /// The connection pool to one server, the one that accepted writes when it was made.
    ///
    /// `generation` counts the pools a ``Database`` has made: a suspicion about a pool that
    /// has since been replaced is ignored.
    public struct Pool: Sendable {
        /// The server.
        public let endpoint: DatabaseSettings.Endpoint
        /// Its pool (postgres-nio's client).
        public let client: PostgresClient
        let generation: Int
    }

    /// What a caller saw that may mean the server no longer takes writes.
    struct Suspicion: Sendable {
        enum Kind: Sendable {
            /// The listener's connection dropped.
            case lost
            /// A call outlived `database.request_timeout`.
            case timeout
            /// A write reached a server in recovery (SQLSTATE 25006): a standby, a demoted primary.
            case readOnly
        }

        let kind: Kind
        let generation: Int
        /// When what it saw began (``Database/outages`` start there).
        let since: Timestamp
    }

    /// The current pool, once one is made, and the calls waiting for it (at start-up, or
    /// while the listener waits for the next server).
    final class PoolSlot: Sendable {
        private struct State {
            var pool: Pool?
            var waiters: [Int: CheckedContinuation<Pool, any Error>] = [:]
            var nextWaiter = 0
        }

        private let state = Mutex(State())

        /// The pool, if there is one now.
        var current: Pool? { state.withLock { $0.pool } }

        /// Makes `pool` the current one and hands it to every waiting caller.
        func install(_ pool: Pool) {
            let waiters = state.withLock { state in
                state.pool = pool
                defer { state.waiters = [:] }
                return state.waiters.values
            }
            for waiter in waiters { waiter.resume(returning: pool) }
        }

        /// Removes the current pool: callers wait for the next one.
        func clear() {
            state.withLock { $0.pool = nil }
        }

        /// The current pool, waiting for one while there is none; cancellation ends the wait.
        func pool() async throws -> Pool {
            if let pool = current { return pool }
            let id = state.withLock { state in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let ready = state.withLock { state -> Result<Pool, any Error>? in
                        if let pool = state.pool { return .success(pool) }
                        // Cancelled before it could wait: the handler has run and found no waiter.
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters[id] = continuation
                        return nil
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
            }
        }
    }
}
