public import CoreMetrics

/// What one cache records: hits, misses and evictions as they happen, its size in entries
/// and in cost (bytes, for the tenant state) after every change.
///
/// One set of names for every cache, told apart by a `cache` dimension:
/// `portcullis_cache_hits_total`, `portcullis_cache_misses_total`,
/// `portcullis_cache_evictions_total`, `portcullis_cache_entries`, `portcullis_cache_cost`.
public struct CacheMetrics: Sendable {
    private let hits: Counter
    private let misses: Counter
    private let evictions: Counter
    private let entries: Gauge
    private let cost: Gauge

    /// The metrics of the cache called `name`, made by `factory`.
    public init(cache name: String, factory: any MetricsFactory) {
        let dimensions = [("cache", name)]
        hits = Counter(label: "portcullis_cache_hits_total", dimensions: dimensions, factory: factory)
        misses = Counter(label: "portcullis_cache_misses_total", dimensions: dimensions, factory: factory)
        evictions = Counter(label: "portcullis_cache_evictions_total", dimensions: dimensions, factory: factory)
        entries = Gauge(label: "portcullis_cache_entries", dimensions: dimensions, factory: factory)
        cost = Gauge(label: "portcullis_cache_cost", dimensions: dimensions, factory: factory)
    }

    /// Records nowhere: caches no one watches (the tests', the small per-user ones).
    public static var none: CacheMetrics { CacheMetrics(cache: "", factory: NOOPMetricsHandler.instance) }

    func recordHit() { hits.increment() }

    func recordMiss() { misses.increment() }

    func recordEvictions(_ count: Int) {
        if count > 0 { evictions.increment(by: count) }
    }

    /// The size after a change.
    func record<Key, Value>(_ contents: LeastRecentlyUsed<Key, Value>) {
        entries.record(contents.count)
        cost.record(contents.cost)
    }
}
