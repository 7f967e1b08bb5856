import PortcullisCore
import Synchronization

/// An in-memory cache, bounded and least-recently-used, whose fills cannot bring back what
/// an invalidation dropped.
///
/// A miss loads outside the lock (from PostgreSQL, usually). If an invalidation of its key
/// lands while that load is in flight, the loaded value may predate it, and storing it would
/// undo the invalidation until the next one. A fill is therefore stored only if no
/// invalidation of its key (nor a wider one) happened since the load began; the caller still
/// gets the value it loaded.
///
/// The entries' costs (bytes, for the tenant state of ``TenantCacheBudget``; one each otherwise)
/// add up to at most the limit: a fill past it evicts the least recently used entries, which
/// reload on their next use.
///
/// A full flush may keep what it drops as *last known* (``invalidateAll(keepingLastKnown:)``):
/// the periodic safety-net flush does, for the caches forward auth verifies with, so a flush
/// that lands just before PostgreSQL goes away does not leave them empty for the outage. A
/// last-known value stays in place, within the same limit, and is served only when a load
/// fails with `UNAVAILABLE`; any invalidation naming its key drops it (a change known to have
/// happened is never served).
public final class GuardedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Slot {
        var value: Value
        /// `false` once a flush kept it as last known.
        var current: Bool
    }

    private struct State {
        var slots: LeastRecentlyUsed<Key, Slot>
        /// Bumped by every invalidation of more than one key.
        var generation: UInt64 = 0
        /// Bumped by every invalidation of one key; `invalidated` holds the stamp of each key
        /// invalidated while loads were in flight (emptied when none is, and by every wider
        /// invalidation, the periodic flush among them), so a load is refused
        /// only for its own key: a burst of new tenants, each invalidating its keyring as its
        /// first key commits, does not refuse every other tenant's load in flight.
        var stamp: UInt64 = 0
        var invalidated: [Key: UInt64] = [:]
        var loading = 0

        /// Ends a load begun at `generation` and `stamp`: whether what it read may be stored.
        mutating func finishLoad(of key: Key, generation: UInt64, stamp: UInt64) -> Bool {
            let storable = self.generation == generation && (invalidated[key] ?? 0) <= stamp
            loading -= 1
            if loading == 0 { invalidated.removeAll(keepingCapacity: true) }
            return storable
        }
    }

    private let state: Mutex<State>
    private let cost: @Sendable (Value) -> Int
    private let metrics: CacheMetrics

    /// A cache whose entries' `cost`s add up to at most `limit` (by default, at most
    /// `limit` entries), recording into `metrics`.
    public init(limit: Int, cost: @escaping @Sendable (Value) -> Int = { _ in 1 }, metrics: CacheMetrics = .none) {
        self.state = Mutex(State(slots: LeastRecentlyUsed(limit: limit)))
        self.cost = cost
        self.metrics = metrics
    }

    /// The current value, if cached.
    public func cached(_ key: Key) -> Value? {
        state.withLock { state in state.slots.peek(key).flatMap { $0.current ? $0.value : nil } }
    }

    /// The cached value, or `load`'s, stored unless an invalidation of its key happened meanwhile.
    public func value(for key: Key, load: () async throws -> Value) async throws -> Value {
        let (cached, generation, stamp) = state.withLock { state -> (Value?, UInt64, UInt64) in
            if let slot = state.slots.value(for: key), slot.current { return (slot.value, 0, 0) }
            state.loading += 1
            return (nil, state.generation, state.stamp)
        }
        if let cached {
            metrics.recordHit()
            return cached
        }
        metrics.recordMiss()
        let loaded: Value
        do {
            loaded = try await load()
        } catch {
            let lastKnown = state.withLock { state in
                _ = state.finishLoad(of: key, generation: generation, stamp: stamp)
                return state.slots.peek(key)?.value
            }
            guard let lastKnown, let failure = error as? AuthError, failure.code == .unavailable else { throw error }
            return lastKnown
        }
        let cost = cost(loaded)
        state.withLock { state in
            guard state.finishLoad(of: key, generation: generation, stamp: stamp) else {
                // Not stored, but a last-known copy of an older value must not outlive the load either.
                if state.slots.peek(key)?.current == false { state.slots.removeValue(for: key) }
                return
            }
            metrics.recordEvictions(state.slots.insert(Slot(value: loaded, current: true), for: key, cost: cost))
            metrics.record(state.slots)
        }
        return loaded
    }

    /// Drops `key`'s entry, and makes loads in flight not store theirs.
    public func invalidate(_ key: Key) {
        state.withLock { state in
            state.stamp &+= 1
            if state.loading > 0 { state.invalidated[key] = state.stamp }
            state.slots.removeValue(for: key)
            metrics.record(state.slots)
        }
    }

    /// Drops every entry matching `predicate`, and makes loads in flight not store theirs.
    public func invalidate(where predicate: @Sendable (Key) -> Bool) {
        state.withLock { state in
            state.generation &+= 1
            // The generation refuses every load in flight: the per-key stamps are moot.
            state.invalidated.removeAll(keepingCapacity: true)
            state.slots.removeAll { key, _ in predicate(key) }
            metrics.record(state.slots)
        }
    }

    /// Drops everything, and makes loads in flight not store theirs; `keepingLastKnown`: what
    /// it drops stays as last known, for loads that fail with `UNAVAILABLE`.
    public func invalidateAll(keepingLastKnown: Bool = false) {
        state.withLock { state in
            state.generation &+= 1
            state.invalidated.removeAll(keepingCapacity: true)
            if keepingLastKnown {
                state.slots.update { _, slot in Slot(value: slot.value, current: false) }
            } else {
                state.slots.removeAll()
            }
            metrics.record(state.slots)
        }
    }
}
