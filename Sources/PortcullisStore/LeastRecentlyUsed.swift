/// Entries kept in order of use, bounded by the sum of their costs: inserting past the
/// bound evicts the least recently used first.
///
/// Not synchronised: the caches hold it inside their mutex. Every operation but the
/// predicate-filtered removal and ``update(_:)`` is O(1); entries live in one array linked
/// by index, so an entry costs no allocation of its own once the arrays have grown.
struct LeastRecentlyUsed<Key: Hashable, Value> {
    private struct Entry {
        var key: Key
        var value: Value
        var cost: Int
    }

    /// Kept apart from the entries, so reordering on a hit touches two integers, not the values.
    private struct Link {
        var older = -1
        var newer = -1
    }

    /// The bound on ``cost``'s sum; an entry costing more than it alone is not kept.
    let limit: Int
    /// The sum of the entries' costs.
    private(set) var cost = 0
    private var entries: [Entry?] = []
    private var links: [Link] = []
    private var vacant: [Int] = []
    private var positions: [Key: Int] = [:]
    private var newest = -1
    private var oldest = -1

    /// An empty cache whose entries' costs may add up to `limit`.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// How many entries it holds.
    var count: Int { positions.count }

    /// `key`'s value, marked as just used.
    mutating func value(for key: Key) -> Value? {
        guard let position = positions[key] else { return nil }
        moveToNewest(position)
        return entries[position]?.value
    }

    /// `key`'s value, leaving the order alone.
    func peek(_ key: Key) -> Value? {
        positions[key].flatMap { entries[$0]?.value }
    }

    /// Stores `value` as the newest entry, replacing `key`'s; returns how many other
    /// entries were evicted to stay within ``limit``.
    @discardableResult
    mutating func insert(_ value: Value, for key: Key, cost: Int) -> Int {
        removeValue(for: key)
        guard cost <= limit else { return 0 }
        var evicted = 0
        while self.cost + cost > limit, oldest >= 0, let entry = entries[oldest] {
            removeValue(for: entry.key)
            evicted += 1
        }
        let entry = Entry(key: key, value: value, cost: cost)
        let position: Int
        if let reused = vacant.popLast() {
            position = reused
            entries[position] = entry
        } else {
            position = entries.count
            entries.append(entry)
            links.append(Link())
        }
        link(position)
        positions[key] = position
        self.cost += cost
        return evicted
    }

    /// Drops `key`'s entry, returning its value.
    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let position = positions.removeValue(forKey: key), let entry = entries[position] else { return nil }
        unlink(position)
        entries[position] = nil
        vacant.append(position)
        cost -= entry.cost
        return entry.value
    }

    /// Drops every entry `predicate` names.
    mutating func removeAll(where predicate: (Key, Value) -> Bool) {
        for case let entry? in entries where predicate(entry.key, entry.value) { removeValue(for: entry.key) }
    }

    /// Drops everything, keeping the storage for the entries to come.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        links.removeAll(keepingCapacity: true)
        vacant.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        newest = -1
        oldest = -1
        cost = 0
    }

    /// Replaces every value with `transform`'s, keeping order and costs; a `nil` drops the entry.
    mutating func update(_ transform: (Key, Value) -> Value?) {
        for (position, entry) in entries.enumerated() {
            guard let entry else { continue }
            if let updated = transform(entry.key, entry.value) {
                entries[position]?.value = updated
            } else {
                removeValue(for: entry.key)
            }
        }
    }

    private mutating func moveToNewest(_ position: Int) {
        guard position != newest else { return }
        unlink(position)
        link(position)
    }

    /// Links the entry at `position` as the newest.
    private mutating func link(_ position: Int) {
        links[position] = Link(older: newest, newer: -1)
        if newest >= 0 { links[newest].newer = position }
        newest = position
        if oldest < 0 { oldest = position }
    }

    private mutating func unlink(_ position: Int) {
        let link = links[position]
        if link.older >= 0 { links[link.older].newer = link.newer } else { oldest = link.newer }
        if link.newer >= 0 { links[link.newer].older = link.older } else { newest = link.older }
    }
}
