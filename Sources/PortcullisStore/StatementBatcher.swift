import PortcullisCore
import Synchronization

/// Runs one statement for many concurrent requests: group commit for a hot write.
///
/// A request that finds fewer than ``maximumLeaders`` batches running leads one at once, so
/// a lone request never waits. Requests arriving while every slot is taken queue up, and
/// when a batch ends its leader hands the slot to the first queued request, which runs the
/// whole queue (up to ``maximumBatch``) as the next batch. Under load PostgreSQL then parses,
/// plans, executes and commits once per batch instead of once per request: for the refresh
/// rotation that is about a quarter of the database's CPU per request (BENCHMARKS.md).
///
/// Requests carry a key (the row they lock, such as the user a sign-in records itself on),
/// and no key is in two batches running at once, nor twice in one batch: a request whose
/// key is taken waits in the queue for the batch holding it, while requests behind it that
/// touch other rows go ahead. Without it, one account signing in over and over (a script
/// with a stolen password, a flood) filled every slot with batches waiting on that user's
/// row lock, each for the last one's commit, and another tenant's sign-in queued behind
/// them all.
///
/// Every batch runs inside a request's own task, so there is no background task to start,
/// stop or forget. When a batch fails, each request in it gets ``Outcome/failed`` and is
/// expected to retry alone, so one request's cancellation or a deadlock victim never
/// becomes another request's error; when the database is unavailable (the batch hit its
/// deadline, or the server is gone), each gets ``Outcome/unavailable`` and gives up with its
/// leader rather than wait out a deadline of its own.
final class StatementBatcher<Request: Sendable, Key: Hashable & Sendable, Response: Sendable>: Sendable {
    /// What a request gets back.
    enum Outcome: Sendable {
        /// The batch ran; this is the request's own answer.
        case answered(Response)
        /// The batch failed as a whole; the request should run alone.
        case failed
        /// The database did not answer the batch in time, or is gone: the request fails too.
        case unavailable
    }

    /// Runs one batch; returns one response per request, in order.
    typealias Execute = @Sendable ([Request]) async throws -> [Response]

    /// The row a request locks: two requests with one key never run at the same time.
    typealias KeyOf = @Sendable (Request) -> Key

    /// Batches that may run at once (each holds a database connection).
    let maximumLeaders: Int
    /// Requests in one batch at most.
    let maximumBatch: Int
    private let key: KeyOf
    private let execute: Execute
    private let state = Mutex(State())

    private enum Ticket: Sendable {
        case lead
        case done(Outcome)
    }

    private struct Waiter: Sendable {
        let request: Request
        let key: Key
        let continuation: CheckedContinuation<Ticket, Never>
    }

    private struct State: Sendable {
        var leaders = 0
        var waiting: [Waiter] = []
        /// The keys of the requests in running batches.
        var taken: Set<Key> = []

        /// Removes and returns the first waiters whose keys are free, at most `limit`, taking
        /// their keys; the others keep their places.
        mutating func takeFree(_ limit: Int) -> [Waiter] {
            var taken: [Waiter] = []
            var kept: [Waiter] = []
            for waiter in waiting {
                if taken.count < limit, self.taken.insert(waiter.key).inserted {
                    taken.append(waiter)
                } else {
                    kept.append(waiter)
                }
            }
            if !taken.isEmpty { waiting = kept }
            return taken
        }
    }

    /// A batcher running `execute` for up to `maximumBatch` requests at a time, with at most
    /// `maximumLeaders` batches in flight and no `key` in two of them.
    init(maximumLeaders: Int, maximumBatch: Int, key: @escaping KeyOf, execute: @escaping Execute) {
        self.maximumLeaders = max(1, maximumLeaders)
        self.maximumBatch = max(1, maximumBatch)
        self.key = key
        self.execute = execute
    }

    /// Requests waiting for a slot (for observation).
    var queued: Int { state.withLock { $0.waiting.count } }

    /// Runs `request` in the next batch (at once when a slot is free).
    ///
    /// Time spent queued is time waiting for a database connection: it is spent from the
    /// request's budget (``Database/requestBudget``), so a request that queued behind batches
    /// which then hit their deadline leads the next one with only what is left of its
    /// `database.request_timeout`, not with all of it.
    func submit(_ request: Request) async -> Outcome {
        let queued = ContinuousClock.now
        let key = key(request)
        let ticket = await withCheckedContinuation { (continuation: CheckedContinuation<Ticket, Never>) in
            let leads = state.withLock { state in
                guard state.leaders < maximumLeaders, state.taken.insert(key).inserted else {
                    state.waiting.append(Waiter(request: request, key: key, continuation: continuation))
                    return false
                }
                state.leaders += 1
                return true
            }
            if leads { continuation.resume(returning: .lead) }
        }
        switch ticket {
        case .done(let outcome): return outcome
        case .lead:
            Database.requestBudget?.spend(.now - queued)
            return await lead(with: request, key: key)
        }
    }

    /// Runs a batch of `own` and the first queued requests whose keys are free, passes the
    /// slot on to the next queued request with a free key (or frees it), then answers the
    /// followers.
    private func lead(with own: Request, key: Key) async -> Outcome {
        let followers = state.withLock { $0.takeFree(maximumBatch - 1) }
        // Not a swallowed failure: every request of a failed batch is told so and runs alone,
        // which reports its own error, unless the database itself failed them all.
        let responses: [Response]?
        var failure = Outcome.failed
        do {
            responses = try await execute([own] + followers.map(\.request))
        } catch let error as AuthError where error.code == .unavailable {
            (responses, failure) = (nil, .unavailable)
        } catch {
            responses = nil
        }
        let answered = responses.flatMap { $0.count == followers.count + 1 ? $0 : nil }
        // The slot passes on before the followers wake. Resumed tasks queue on the
        // executor in order, and the requests of this batch have their answers to finish
        // (an RSA signature each, for the refresh); a next leader queued behind them would
        // leave the database idle meanwhile, and the cores idle while its batch then runs.
        // Freed keys may let several queued requests lead: the slots other batches gave up
        // while every request queued was waiting for this batch's rows.
        let next = state.withLock { state -> [Waiter] in
            state.taken.remove(key)
            for follower in followers { state.taken.remove(follower.key) }
            state.leaders -= 1
            let leading = state.takeFree(maximumLeaders - state.leaders)
            state.leaders += leading.count
            return leading
        }
        for waiter in next { waiter.continuation.resume(returning: .lead) }
        for (index, follower) in followers.enumerated() {
            follower.continuation.resume(returning: .done(answered.map { .answered($0[index + 1]) } ?? failure))
        }
        return answered.map { .answered($0[0]) } ?? failure
    }
}
