import Foundation
import PortcullisCore
import Synchronization
import Testing

@testable import PortcullisCrypto

#if canImport(Glibc)
import Glibc
#endif

@Suite("The hashing pool")
struct HashingPoolTests {
    @Test("the pool runs work off the caller and returns its result")
    func results() async throws {
        let pool = HashingPool(threads: 2)
        let hasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await pool.run(for: "t\(index % 3)") { hasher.verify("p\(index)", against: try hasher.hash("p\(index)")) }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 8 && results.allSatisfy { $0 })
    }

    @Test("a tenant whose share is full is refused at once, while another tenant is still served")
    func boundedPerTenant() async throws {
        // No spare thread: the other tenant's hash waits, so its pending count can be read.
        let pool = HashingPool(threads: 1, maximumPendingPerTenant: 2, load: SetLoad(busy: false), spare: false)
        let gate = Gate()
        // The flooding tenant: two hashes in flight (one running, held at the gate; one waiting).
        let flood = Task { try await pool.run(for: "flood") { gate.wait() } }
        try await Self.until { pool.pending(for: "flood") == 1 && gate.waiting }
        let queued = Task { try await pool.run(for: "flood") { 1 } }
        try await Self.until { pool.pending(for: "flood") == 2 }
        // A third is refused without waiting for either.
        let started = ContinuousClock.now
        await #expect(throws: HashingPool.Saturated.self) { try await pool.run(for: "flood") { 0 } }
        #expect(ContinuousClock.now - started < .seconds(1))
        // Another tenant still gets in, and is served once the running hash ends.
        let other = Task { try await pool.run(for: "quiet") { 7 } }
        try await Self.until { pool.pending(for: "quiet") == 1 }
        gate.open()
        #expect(try await other.value == 7)
        _ = try await (flood.value, queued.value)
        // Drained: the flooding tenant is accepted again.
        #expect(pool.pending(for: "flood") == 0)
        #expect(try await pool.run(for: "flood") { 42 } == 42)
    }

    @Test("the whole pool holds four tenants' shares: a fifth tenant is refused while four fill it")
    func boundedInTotal() async throws {
        let pool = HashingPool(threads: 1, maximumPendingPerTenant: 1)
        let gate = Gate()
        let held = (0..<4).map { index in Task { try await pool.run(for: "t\(index)") { gate.wait() } } }
        try await Self.until { pool.pending == 4 }
        await #expect(throws: HashingPool.Saturated.self) { try await pool.run(for: "t4") { 0 } }
        gate.open()
        for task in held { try await task.value }
        #expect(try await pool.run(for: "t4") { 4 } == 4)
    }

    @Test("tenants are served in turn: a flood of one tenant's hashes waits behind another tenant's")
    func roundRobin() async throws {
        // No spare thread, which would run the other tenant's hashes at once.
        let pool = HashingPool(threads: 1, maximumPendingPerTenant: 16, load: SetLoad(busy: false), spare: false)
        let gate = Gate()
        let order = Recorder()
        // The one thread is held by the flooding tenant's first hash while the queue fills.
        let running = Task { try await pool.run(for: "flood") { gate.wait() } }
        try await Self.until { pool.pending == 1 && gate.waiting }
        var queued: [Task<Void, any Error>] = []
        // Six more of the flood's, queued before any of the other tenant's three.
        for (tenant, index) in [
            ("flood", 1), ("flood", 2), ("flood", 3), ("flood", 4), ("flood", 5), ("flood", 6),
            ("quiet", 1), ("quiet", 2), ("quiet", 3),
        ] {
            queued.append(Task { try await pool.run(for: tenant) { order.record("\(tenant)\(index)") } })
            try await Self.until { pool.pending == queued.count + 1 }
        }
        gate.open()
        try await running.value
        for task in queued { try await task.value }
        #expect(order.items == ["flood1", "quiet1", "flood2", "quiet2", "flood3", "quiet3", "flood4", "flood5", "flood6"])
    }

    @Test("a thread that frees up takes a hash of the tenant with the fewest running, not the next in turn")
    func leastBusyFirst() async throws {
        // A quiet foreground: both threads take hashes; no spare thread takes the quiet tenant's.
        let pool = HashingPool(threads: 2, maximumPendingPerTenant: 16, load: SetLoad(busy: false), spare: false)
        let (first, second) = (Gate(), Gate())
        let order = Recorder()
        // Both threads run the flooding tenant's hashes, and two more of its wait, queued first.
        let held = [first, second].map { gate in Task { try await pool.run(for: "flood") { gate.wait() } } }
        try await Self.until { pool.pending == 2 && first.waiting && second.waiting }
        var queued: [Task<Void, any Error>] = []
        for (tenant, index) in [("flood", 3), ("flood", 4), ("quiet", 1)] {
            queued.append(Task { try await pool.run(for: tenant) { order.record("\(tenant)\(index)") } })
            try await Self.until { pool.pending == queued.count + 2 }
        }
        // One thread frees up: it serves the tenant with nothing running, though the flood's turn came first.
        first.open()
        try await Self.until { order.items.count == 3 }
        #expect(order.items == ["quiet1", "flood3", "flood4"])
        second.open()
        for task in held + queued { try await task.value }
    }

    @Test(
        "a tenant with no hash running takes the spare thread while the others run another's, the foreground busy or not; a flood never does"
    )
    func spareForNewcomers() async throws {
        let load = SetLoad(busy: false)
        let pool = HashingPool(threads: 2, maximumPendingPerTenant: 16, load: load)
        // Both threads run the flooding tenant's hashes and a third of its waits: the spare leaves it.
        let flood = try await HeldFlood(on: pool)
        // Another tenant's hash runs at once: the flood's two are still held, its third waits.
        #expect(try await pool.run(for: "quiet") { 7 } == 7)
        #expect(pool.pending == 3 && flood.gates.allSatisfy(\.waiting) && flood.order.items.isEmpty)
        // While the foreground is busy too: the yielding thread would leave it behind the flood.
        load.busy.store(true, ordering: .relaxed)
        #expect(try await pool.run(for: "busy") { 8 } == 8)
        load.busy.store(false, ordering: .relaxed)
        #expect(pool.pending == 3 && flood.order.items.isEmpty)
        try await flood.release()
        #expect(flood.order.items == ["flood3"])
    }

    @Test("while the spare runs a newcomer's hash, a thread the flood frees starts no hash of it until one ends")
    func spareKeepsTheCoresShared() async throws {
        let pool = HashingPool(threads: 2, maximumPendingPerTenant: 16, load: SetLoad(busy: false))
        let flood = try await HeldFlood(on: pool)
        let quiet = Gate()
        let newcomer = Task { try await pool.run(for: "quiet") { quiet.wait() } }
        try await Self.until { quiet.waiting }
        // One of the flood's hashes ends: its next would make three hashes on two threads' cores.
        try await flood.end(0)
        try await Task.sleep(for: .milliseconds(50))
        #expect(flood.order.items.isEmpty)
        quiet.open()
        try await newcomer.value
        try await Self.until { flood.order.items == ["flood3"] }
        try await flood.release()
    }

    @Test("the spare's core stays the newcomer's for a moment after its hash: its next takes it, the flood waits out the hold")
    func newcomerHold() async throws {
        let hold = Duration.seconds(1)
        let pool = HashingPool(threads: 2, maximumPendingPerTenant: 16, load: SetLoad(busy: false), newcomerHold: hold)
        let flood = try await HeldFlood(on: pool)
        let quiet = Gate()
        let newcomer = Task { try await pool.run(for: "quiet") { quiet.wait() } }
        try await Self.until { quiet.waiting }
        // A thread the flood frees waits while the newcomer's hash runs, and then while it is away.
        try await flood.end(0)
        quiet.open()
        try await newcomer.value
        try await Task.sleep(for: .milliseconds(100))
        #expect(flood.order.items.isEmpty)
        // Its next hash finds the spare's core free, and holds it again once done.
        let again = ContinuousClock.now
        try await pool.run(for: "quiet") { flood.order.record("quiet2") }
        #expect(flood.order.items == ["quiet2"])
        try await Self.until { flood.order.items == ["quiet2", "flood3"] }
        #expect(ContinuousClock.now - again >= hold)
        try await flood.release()
    }

    @Test("the pool is quiet only once no hash has run or waited for the quiet period")
    func quiet() async throws {
        let pool = HashingPool(threads: 1, load: SetLoad(busy: false), spare: false)
        let period = Duration.seconds(10)
        #expect(pool.isQuiet(for: period))
        let gate = Gate()
        let running = Task { try await pool.run(for: "t") { gate.wait() } }
        try await Self.until { gate.waiting }
        let waiting = Task { try await pool.run(for: "u") { 0 } }
        try await Self.until { pool.pending == 2 }
        // Neither a running hash nor a waiting one is quiet, however long ago the last one ended.
        #expect(!pool.isQuiet(for: period, now: .now + .seconds(60)))
        gate.open()
        _ = try await (running.value, waiting.value)
        let ended = ContinuousClock.now
        #expect(!pool.isQuiet(for: period, now: ended + .seconds(9)))
        #expect(pool.isQuiet(for: period, now: ended + period))
    }

    @Test("a tenant alone gets every thread of the pool")
    func aloneGetsEverything() async throws {
        // Each hash waits (bounded) until both run at once: only two threads serving one tenant can pass.
        #expect(try await Self.runTogether(on: HashingPool(threads: 2, load: SetLoad(busy: false))) == [true, true])
    }

    #if os(Linux)
    @Test("while the foreground is busy, hashes run one at a time on the yielding thread; once it quietens, on both")
    func yieldsToBusyForeground() async throws {
        let load = SetLoad(busy: true)
        let pool = HashingPool(threads: 2, load: load)
        let overlap = Overlap()
        let nices = try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await pool.run(for: "t") {
                        overlap.during { usleep(20_000) }; return Self.nice()
                    }
                }
            }
            return try await group.reduce(into: [Int32]()) { $0.append($1) }
        }
        #expect(overlap.most == 1)
        #expect(Set(nices) == [HashingThreadPriority.yielding.nice])
        load.busy.store(false, ordering: .relaxed)
        #expect(try await Self.runTogether(on: pool) == [true, true])
    }

    @Test("a quiet pool takes its steady thread first, and a lone thread never yields")
    func steadyFirst() async throws {
        let pool = HashingPool(threads: 2, load: SetLoad(busy: false))
        #expect(try await pool.run(for: "t") { Self.nice() } == HashingThreadPriority.steady.nice)
        let lone = HashingPool(threads: 1, load: SetLoad(busy: true))
        #expect(try await lone.run(for: "t") { Self.nice() } == HashingThreadPriority.steady.nice)
    }

    @Test("hashes queued while the foreground was busy are taken by both threads once it quietens")
    func quietensWithQueue() async throws {
        let load = SetLoad(busy: true)
        let pool = HashingPool(threads: 2, load: load)
        let gate = Gate()
        // The yielding thread is held; two more wait, which the steady thread may not take yet.
        let held = Task { try await pool.run(for: "t") { gate.wait() } }
        try await Self.until { gate.waiting }
        let overlap = Overlap()
        let queued = (0..<2).map { _ in Task { try await pool.run(for: "t") { overlap.during { usleep(200_000) } } } }
        try await Self.until { pool.pending == 3 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(overlap.most == 0)
        load.busy.store(false, ordering: .relaxed)
        gate.open()
        try await held.value
        for task in queued { _ = try await task.value }
        #expect(overlap.most == 2)
    }

    @Test("the process's foreground CPU makes it busy; its background threads' CPU is told apart")
    func processLoad() async throws {
        let load = ProcessLoad(busyCores: 0.2)
        _ = load.isBusy()
        // A foreground thread spinning for three windows (other tests' threads only add to it).
        Self.spin(for: .milliseconds(150))
        #expect(load.isBusy())
        // A background thread's CPU is counted as the background's: from its adoption on.
        let before = BackgroundThreads.cpuTime()
        let after = Slot<Int64>()
        Thread {
            Self.spin(for: .milliseconds(100))
            BackgroundThreads.adoptCurrent()
            Self.spin(for: .milliseconds(100))
            after.set(BackgroundThreads.cpuTime())
        }.start()
        try await Self.until { after.value != nil }
        let spun = try #require(after.value) - before
        // At least its spin since adoption (other tests' hashing threads add theirs), and still
        // once the thread has ended.
        #expect(spun >= 90_000_000)
        #expect(BackgroundThreads.cpuTime() >= before + spun)
    }

    /// Burns the calling thread's CPU for `duration` of its own CPU time.
    private static func spin(for duration: Duration) {
        var clock = timespec()
        func now() -> Int64 {
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &clock)
            return Int64(clock.tv_sec) * 1_000_000_000 + Int64(clock.tv_nsec)
        }
        let end = now() + duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        var sink: UInt64 = 0
        while now() < end { sink &+= 1 }
        _ = sink
    }

    @Test("hashing threads run under the fair policy at their nice value with the long slice, and only they do")
    func priority() async throws {
        let pool = HashingPool(threads: 1)
        let (policy, nice, slice) = try await pool.run(for: "") { (sched_getscheduler(0), Self.nice(), Self.slice()) }
        // Not SCHED_IDLE: another process's load can slow hashing, never stop it.
        #expect(policy == SCHED_OTHER)
        #expect(nice == HashingThreadPriority.steady.nice)
        // The kernel honours a fair thread's own slice from Linux 6.12 (and ignores it before).
        if Self.kernelHonoursSlices {
            #expect(slice == HashingThreadPriority.sliceNanoseconds)
            #expect(Self.slice() != HashingThreadPriority.sliceNanoseconds)
        }
        #expect(sched_getscheduler(0) == SCHED_OTHER)
    }

    @Test("keys made ahead of need are made below the hashing threads, and are keys like any other")
    func keysMadeAhead() async throws {
        let nice = try await SigningKey.runAhead { Self.nice() }
        #expect(nice == SigningKey.aheadNice)
        #expect(nice > HashingThreadPriority.yielding.nice)
        for algorithm in TenantSettings.SigningAlgorithm.allCases {
            let (first, second) = (try await SigningKey.generateAhead(algorithm), try await SigningKey.generateAhead(algorithm))
            #expect(first.kid != second.kid)
            let keyring = try await Keyring(active: first, keys: [first, second])
            #expect(keyring.activeKid == first.kid)
        }
    }

    private static func nice() -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    /// The calling thread's `se.slice` from `/proc/thread-self/sched`, in nanoseconds.
    private static func slice() -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/sched", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("se.slice") }
        return line?.split(separator: ":").last.flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
    }

    private static var kernelHonoursSlices: Bool {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return numbers.count == 2 && (numbers[0], numbers[1]) >= (6, 12)
    }
    #endif

    /// Whether two hashes run at once (each waits, bounded, for the other).
    private static func runTogether(on pool: HashingPool) async throws -> [Bool] {
        let running = Count()
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await pool.run(for: "t") {
                        running.value.add(1, ordering: .relaxed)
                        let deadline = ContinuousClock.now + .seconds(10)
                        while running.value.load(ordering: .relaxed) < 2, ContinuousClock.now < deadline { usleep(1000) }
                        return running.value.load(ordering: .relaxed) == 2
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
    }

    /// Waits (bounded) until `condition` holds: the pool admits work from tasks whose start
    /// order the test does not control.
    static func until(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw GateTimeout() }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}

struct GateTimeout: Error {}

/// A flooding tenant's hashes held on both threads of a pool and a third of them waiting:
/// where the spare thread's tests start.
struct HeldFlood {
    let gates: [Gate]
    let held: [Task<Void, any Error>]
    let third: Task<Void, any Error>
    /// What ran, the third hash recorded as "flood3".
    let order: Recorder

    init(on pool: HashingPool) async throws {
        let (gates, order) = ([Gate(), Gate()], Recorder())
        held = gates.map { gate in Task { try await pool.run(for: "flood") { gate.wait() } } }
        try await HashingPoolTests.until { gates.allSatisfy(\.waiting) }
        third = Task { try await pool.run(for: "flood") { order.record("flood3") } }
        try await HashingPoolTests.until { pool.pending == 3 }
        (self.gates, self.order) = (gates, order)
    }

    /// Lets held hash `index` end.
    func end(_ index: Int) async throws {
        gates[index].open()
        try await held[index].value
    }

    /// Lets every hash end, and waits for all three.
    func release() async throws {
        for index in gates.indices { try await end(index) }
        try await third.value
    }
}

/// What ran, in order.
final class Recorder: Sendable {
    private let recorded = Mutex<[String]>([])

    var items: [String] { recorded.withLock { $0 } }

    func record(_ item: String) { recorded.withLock { $0.append(item) } }
}

final class Count: Sendable {
    let value = Atomic<Int>(0)
}

/// One value another thread hands over.
final class Slot<Value: Sendable>: Sendable {
    private let stored = Mutex<Value?>(nil)

    var value: Value? { stored.withLock { $0 } }

    func set(_ value: Value) { stored.withLock { $0 = value } }
}

/// A foreground whose business the test sets.
final class SetLoad: ForegroundLoad {
    let busy: Atomic<Bool>

    init(busy: Bool) { self.busy = Atomic(busy) }

    func isBusy() -> Bool { busy.load(ordering: .relaxed) }
}

/// The most pieces of work seen running at once.
final class Overlap: Sendable {
    private let counts = Mutex((running: 0, most: 0))

    var most: Int { counts.withLock { $0.most } }

    @discardableResult
    func during<Value>(_ work: () -> Value) -> Value {
        counts.withLock {
            $0.running += 1
            $0.most = max($0.most, $0.running)
        }
        defer { counts.withLock { $0.running -= 1 } }
        return work()
    }
}

/// A gate a pool thread waits at until the test opens it (bounded, so a broken pool fails the
/// test instead of hanging it).
final class Gate: Sendable {
    private let state = Mutex((open: false, waiting: false))
    private let condition = NSCondition()

    /// Whether a thread is waiting at the gate.
    var waiting: Bool { state.withLock { $0.waiting } }

    func wait() {
        state.withLock { $0.waiting = true }
        let deadline = Date().addingTimeInterval(10)
        condition.lock()
        while !state.withLock({ $0.open }), Date() < deadline { _ = condition.wait(until: deadline) }
        condition.unlock()
    }

    func open() {
        condition.lock()
        state.withLock { $0.open = true }
        condition.broadcast()
        condition.unlock()
    }
}
