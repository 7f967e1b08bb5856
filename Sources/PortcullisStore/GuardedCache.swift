import PortcullisCore
import Synchronization

/// An in-memory cache whose fills cannot bring back what an invalidation dropped.
///
/// A miss loads outside the lock (from PostgreSQL, usually). If an invalidation
/// lands while that load is in flight, the loaded value may predate it, and storing
/// it would undo the invalidation until the next one. Every invalidation therefore
/// bumps a generation, and a fill is stored only if no invalidation happened since
/// the load began; the caller still gets the value it loaded.
///
/// A full flush may keep what it drops as *last known* (``invalidateAll(keepingLastKnown:)``):
/// the periodic safety-net flush does, for the caches forward auth verifies with, so a flush
/// that lands just before PostgreSQL goes away does not leave them empty for the outage. A
/// last-known value is served only when a load fails with `UNAVAILABLE`, and is dropped by
/// any invalidation naming its key (a change known to have happened is never served).
public final class GuardedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var entries: [Key: Value] = [:]
        var lastKnown: [Key: Value] = [:]
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    private let capacity: Int

    /// A cache holding at most `capacity` entries (emptied when full: entries are cheap to reload).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The cached value, if any.
    public func cached(_ key: Key) -> Value? {
        state.withLock { $0.entries[key] }
    }

    /// The cached value, or `load`'s, stored unless an invalidation happened meanwhile.
    public func value(for key: Key, load: () async throws -> Value) async throws -> Value {
        let (cached, generation) = state.withLock { ($0.entries[key], $0.generation) }
        if let cached { return cached }
        let loaded: Value
        do {
            loaded = try await load()
        } catch let error as AuthError where error.code == .unavailable {
            guard let lastKnown = state.withLock({ $0.lastKnown[key] }) else { throw error }
            return lastKnown
        }
        state.withLock { state in
            state.lastKnown[key] = nil
            guard state.generation == generation else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = loaded
        }
        return loaded
    }

    /// Drops `key`'s entry, and makes loads in flight not store theirs.
    public func invalidate(_ key: Key) {
        state.withLock { state in
            state.generation &+= 1
            state.entries[key] = nil
            state.lastKnown[key] = nil
        }
    }

    /// Drops every entry matching `predicate`, and makes loads in flight not store theirs.
    public func invalidate(where predicate: (Key) -> Bool) {
        state.withLock { state in
            state.generation &+= 1
            state.entries = state.entries.filter { !predicate($0.key) }
            state.lastKnown = state.lastKnown.filter { !predicate($0.key) }
        }
    }

    /// Drops everything, and makes loads in flight not store theirs; `keepingLastKnown`: what
    /// it drops stays as last known, for loads that fail with `UNAVAILABLE`.
    public func invalidateAll(keepingLastKnown: Bool = false) {
        state.withLock { state in
            state.generation &+= 1
            if keepingLastKnown {
                state.lastKnown.merge(state.entries) { _, current in current }
            } else {
                state.lastKnown.removeAll()
            }
            state.entries.removeAll()
        }
    }
}
