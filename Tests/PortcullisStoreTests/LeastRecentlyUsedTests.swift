import PortcullisCore
import Testing

@testable import PortcullisStore

@Suite("Least recently used, bounded by cost")
struct LeastRecentlyUsedTests {
    @Test("inserting past the limit evicts the least recently used first; a read makes an entry the most recent")
    func evictsInOrderOfUse() {
        var cache = LeastRecentlyUsed<String, Int>(limit: 3)
        for (index, key) in ["a", "b", "c"].enumerated() { #expect(cache.insert(index, for: key, cost: 1) == 0) }
        #expect(cache.value(for: "a") == 0)  // a is now the most recent: b is the oldest
        #expect(cache.insert(3, for: "d", cost: 1) == 1)
        #expect(cache.peek("b") == nil)
        #expect(cache.peek("a") == 0 && cache.peek("c") == 2 && cache.peek("d") == 3)
        // peek leaves the order alone: c is still the oldest.
        _ = cache.peek("c")
        #expect(cache.insert(4, for: "e", cost: 1) == 1)
        #expect(cache.peek("c") == nil)
        #expect(cache.count == 3 && cache.cost == 3)
    }

    @Test("costs add up: a costly entry evicts as many as it needs, one over the limit is not kept, a replacement re-costs")
    func costs() {
        var cache = LeastRecentlyUsed<String, Int>(limit: 10)
        for (index, key) in ["a", "b", "c", "d", "e"].enumerated() { cache.insert(index, for: key, cost: 2) }
        #expect(cache.cost == 10)
        #expect(cache.insert(9, for: "f", cost: 5) == 3)  // a, b and c go: 4 + 5 ≤ 10
        #expect(cache.peek("a") == nil && cache.peek("b") == nil && cache.peek("c") == nil)
        #expect(cache.cost == 9 && cache.count == 3)
        #expect(cache.insert(0, for: "huge", cost: 11) == 0)
        #expect(cache.peek("huge") == nil && cache.cost == 9)
        // Replacing d re-costs it and makes it the most recent.
        #expect(cache.insert(7, for: "d", cost: 1) == 0)
        #expect(cache.cost == 8 && cache.peek("d") == 7)
        #expect(cache.insert(8, for: "g", cost: 3) == 1)  // e, the oldest, goes
        #expect(cache.peek("e") == nil && cache.peek("d") == 7 && cache.peek("f") == 9)
    }

    @Test("removals free their cost and slots; removeAll(where:), update and removeAll keep the rest consistent")
    func removals() {
        var cache = LeastRecentlyUsed<String, Int>(limit: 100)
        for (index, key) in ["a", "b", "c", "d", "e", "f"].enumerated() { cache.insert(index, for: key, cost: index + 1) }
        #expect(cache.removeValue(for: "c") == 2)
        #expect(cache.removeValue(for: "c") == nil)
        #expect(cache.cost == 21 - 3)
        cache.removeAll { _, value in value.isMultiple(of: 2) }  // a (0) and e (4) go
        #expect(cache.count == 3 && cache.cost == 2 + 4 + 6)
        cache.update { key, value in key == "b" ? nil : value * 10 }
        #expect(cache.peek("b") == nil && cache.peek("d") == 30 && cache.peek("f") == 50)
        #expect(cache.cost == 4 + 6)
        // The freed slots are reused, and the order still holds: d is older than f.
        cache.insert(1, for: "x", cost: 90)
        #expect(cache.insert(2, for: "y", cost: 4) == 1)
        #expect(cache.peek("d") == nil && cache.peek("f") == 50)
        cache.removeAll()
        #expect(cache.count == 0 && cache.cost == 0 && cache.peek("f") == nil)
        #expect(cache.insert(3, for: "z", cost: 100) == 0 && cache.peek("z") == 3)
    }

    @Test("a guarded cache evicts past its limit, and a flush's last-known copies stay within it")
    func guardedCacheBound() async throws {
        let cache = GuardedCache<String, Int>(limit: 3)
        let down: @Sendable () async throws -> Int = { throw AuthError(.unavailable) }
        for (index, key) in ["a", "b", "c"].enumerated() { _ = try await cache.value(for: key) { index } }
        #expect(try await cache.value(for: "a") { 99 } == 0)  // a hit: a is the most recent
        _ = try await cache.value(for: "d") { 3 }
        #expect(cache.cached("b") == nil && cache.cached("a") == 0)
        cache.invalidateAll(keepingLastKnown: true)
        // Last known: a, c, d. A new entry evicts the oldest of them, c.
        _ = try await cache.value(for: "e") { 4 }
        await #expect(throws: AuthError(.unavailable)) { try await cache.value(for: "c", load: down) }
        #expect(try await cache.value(for: "a", load: down) == 0)
        #expect(try await cache.value(for: "d", load: down) == 3)
    }
}
