public import PortcullisAuth
public import Prometheus
import Synchronization

/// Request counters and latency histograms, by route template, method and status.
///
/// Backed by one `PrometheusCollectorRegistry` per application (not the
/// process-global metrics system), so several instances in one test process
/// keep separate figures.
public final class HTTPMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry: PrometheusCollectorRegistry
    private let series = Mutex<[Key: (Counter, DurationHistogram)]>([:])
    /// Successful requests by the tenant they acted for: a family apart from the registry,
    /// which grows with the tenants (`CounterFamily`).
    public let tenantRequests = CounterFamily(
        name: "portcullis_tenant_requests_total", help: "Successful HTTP requests by the tenant they acted for",
        labelNames: ["tenant"])

    static let buckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5), .seconds(5),
    ]

    /// Metrics recorded into `registry`.
    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    private struct Key: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    /// Records one finished request.
    func record(route: String, method: String, status: Int, duration: Duration) {
        let (counter, histogram) = series.withLock { cache in
            let key = Key(route: route, method: method, status: status)
            if let found = cache[key] { return found }
            let counter = registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "portcullis", subsystem: "http", metricName: "requests", unitName: "total",
                    helpText: "HTTP requests by route template, method and status"),
                labels: [("route", route), ("method", method), ("status", String(status))])
            // One histogram per route and method, shared by every status.
            let histogram =
                cache.first { $0.key.route == route && $0.key.method == method }?.value.1
                ?? registry.makeDurationHistogram(
                    descriptor: MetricNameDescriptor(
                        namespace: "portcullis", subsystem: "http", metricName: "request_duration", unitName: "seconds",
                        helpText: "HTTP request latency by route template and method"),
                    labels: [("route", route), ("method", method)], buckets: Self.buckets)
            cache[key] = (counter, histogram)
            return (counter, histogram)
        }
        counter.increment()
        histogram.record(duration)
    }

    /// Records one successful request acting for `tenant`.
    ///
    /// Successful only: a request naming a tenant that does not exist fails, so ids an
    /// attacker makes up never become series (each series stays in memory).
    func recordTenantRequest(_ tenant: String) {
        tenantRequests.increment([tenant])
    }
}
