import Synchronization
import Testing

@testable import PortcullisStore

/// The group-commit batcher on its own: a lone request runs at once, queued requests share
/// the next batch and each gets its own answer, a failed batch fails only its members, and
/// requests for one row never share a batch nor wait in two at once.
@Suite("Statement batcher")
struct StatementBatcherTests {
    /// Batches as `execute` saw them, and a gate that holds any batch containing 0.
    final class Recorder: Sendable {
        let batches = Mutex<[[Int]]>([])
        let gate = AsyncStream<Void>.makeStream()

        func execute(_ batch: [Int]) async throws -> [Int] {
            batches.withLock { $0.append(batch) }
            if batch.contains(0) { for await _ in gate.stream { break } }
            if batch.contains(where: { $0 < 0 }) { throw CancellationError() }
            return batch.map { $0 * 10 }
        }

        var count: Int { batches.withLock { $0.count } }
    }

    /// Waits (bounded) until `condition` holds: the batcher's tasks run concurrently.
    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<5000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }

    static func answer(_ outcome: StatementBatcher<Int, Int, Int>.Outcome) -> Int? {
        if case .answered(let value) = outcome { return value }
        return nil
    }

    @Test("a lone request runs at once, as a batch of one")
    func loneRequest() async {
        let recorder = Recorder()
        let batcher = StatementBatcher<Int, Int, Int>(maximumLeaders: 2, maximumBatch: 64, key: { $0 }, execute: recorder.execute)
        #expect(Self.answer(await batcher.submit(7)) == 70)
        #expect(recorder.batches.withLock { $0 } == [[7]])
    }

    @Test("while every slot is busy, requests queue; the next batch takes them all and answers each its own")
    func queuedRequestsShareTheNextBatch() async throws {
        let recorder = Recorder()
        let batcher = StatementBatcher<Int, Int, Int>(maximumLeaders: 1, maximumBatch: 64, key: { $0 }, execute: recorder.execute)
        let answers = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
            group.addTask { (0, Self.answer(await batcher.submit(0))) }
            try await Self.eventually { recorder.count == 1 }
            for request in 1...9 { group.addTask { (request, Self.answer(await batcher.submit(request))) } }
            try await Self.eventually { batcher.queued == 9 }
            recorder.gate.continuation.yield()
            var answers: [Int: Int?] = [:]
            for try await (request, answer) in group { answers[request] = answer }
            return answers
        }
        for request in 0...9 { #expect(answers[request] == request * 10) }
        let batches = recorder.batches.withLock { $0 }
        #expect(batches.count == 2, "\(batches)")
        #expect(batches.first == [0])
        #expect(Set(batches.last ?? []) == Set(1...9))
    }

    @Test("a failed batch answers each of its requests .failed, and the slot passes on")
    func failedBatch() async throws {
        let recorder = Recorder()
        let batcher = StatementBatcher<Int, Int, Int>(maximumLeaders: 1, maximumBatch: 64, key: { $0 }, execute: recorder.execute)
        let answers = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
            group.addTask { (0, Self.answer(await batcher.submit(0))) }
            try await Self.eventually { recorder.count == 1 }
            for request in [-1, 1, 2] { group.addTask { (request, Self.answer(await batcher.submit(request))) } }
            try await Self.eventually { batcher.queued == 3 }
            recorder.gate.continuation.yield()
            var answers: [Int: Int?] = [:]
            for try await (request, answer) in group { answers[request] = answer }
            return answers
        }
        #expect(answers[0] == 0)
        for request in [-1, 1, 2] { #expect(answers[request] == .some(nil), "request \(request) was in the failed batch") }
        #expect(Self.answer(await batcher.submit(5)) == 50, "the slot was freed")
    }

    @Test("a batch holds at most maximumBatch requests; the rest wait for the next")
    func batchLimit() async throws {
        let recorder = Recorder()
        let batcher = StatementBatcher<Int, Int, Int>(maximumLeaders: 1, maximumBatch: 4, key: { $0 }, execute: recorder.execute)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = await batcher.submit(0) }
            try await Self.eventually { recorder.count == 1 }
            for request in 1...10 { group.addTask { #expect(Self.answer(await batcher.submit(request)) == request * 10) } }
            try await Self.eventually { batcher.queued == 10 }
            recorder.gate.continuation.yield()
            try await group.waitForAll()
        }
        let sizes = recorder.batches.withLock { $0.map(\.count) }
        #expect(sizes == [1, 4, 4, 2], "\(sizes)")
    }

    /// Requests are keyed by the hundreds they add to a row number: 7, 107 and 207 lock row 7.
    static func row(_ request: Int) -> Int { request % 100 }

    @Test("no batch holds two requests for one row; they run one batch after another")
    func oneRowPerBatch() async throws {
        let recorder = Recorder()
        let batcher = StatementBatcher<Int, Int, Int>(maximumLeaders: 1, maximumBatch: 64, key: Self.row, execute: recorder.execute)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = await batcher.submit(0) }
            try await Self.eventually { recorder.count == 1 }
            for request in [1, 101, 201, 2, 102] {
                group.addTask { #expect(Self.answer(await batcher.submit(request)) == request * 10) }
            }
            try await Self.eventually { batcher.queued == 5 }
            recorder.gate.continuation.yield()
            try await group.waitForAll()
        }
        let batches = recorder.batches.withLock { $0 }
        #expect(batches.map(\.count) == [1, 2, 2, 1], "\(batches)")
        for batch in batches { #expect(Set(batch.map(Self.row)).count == batch.count, "\(batches)") }
    }

    @Test("a request whose row a running batch holds waits for it; one for another row leads at once")
    func heldRowWaitsOthersGoAhead() async throws {
        let recorder = Recorder()
        let batcher = StatementBatcher<Int, Int, Int>(maximumLeaders: 2, maximumBatch: 64, key: Self.row, execute: recorder.execute)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { #expect(Self.answer(await batcher.submit(0)) == 0) }
            try await Self.eventually { recorder.count == 1 }
            group.addTask { #expect(Self.answer(await batcher.submit(100)) == 1000) }
            try await Self.eventually { batcher.queued == 1 }
            // A slot is free, but row 0 is held: 100 waits, while 5 and then 6 run at once.
            #expect(Self.answer(await batcher.submit(5)) == 50)
            #expect(Self.answer(await batcher.submit(6)) == 60)
            #expect(batcher.queued == 1)
            recorder.gate.continuation.yield()
            try await group.waitForAll()
        }
        #expect(recorder.batches.withLock { $0 } == [[0], [5], [6], [100]])
    }
}
