import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisStore
import Prometheus

/// `/healthz` (alive), `/readyz` (not shutting down, database reachable, schema current),
/// `/metrics` (Prometheus).
struct HealthRoutes {
    let database: Database
    let migrator: Migrator
    let metrics: HTTPMetrics
    /// The families rendered after the registry's (``CounterFamily``).
    let counters: [CounterFamily]
    let drain: Drain

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("healthz") { _, _ in HealthStatus() }
        router.get("readyz") { _, _ in
            guard !drain.isDraining else { throw AuthError(.unavailable, detail: "shutting down") }
            guard await database.ping() else { throw AuthError(.unavailable, detail: "database unreachable") }
            guard await migrator.isCurrent() else { throw AuthError(.unavailable, detail: "migrations pending") }
            return HealthStatus()
        }
        let inUse = metrics.registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "portcullis", subsystem: "db_pool", metricName: "in_use", unitName: "connections",
                helpText: "PostgreSQL connections leased right now"))
        let maximum = metrics.registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "portcullis", subsystem: "db_pool", metricName: "max", unitName: "connections",
                helpText: "Size limit of the PostgreSQL pool"))
        router.get("metrics") { _, _ in
            inUse.set(Int64(database.connectionsInUse))
            maximum.set(Int64(database.settings.maximumConnections))
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: Self.render(metrics.registry, counters))))
        }
    }

    private static func render(_ registry: PrometheusCollectorRegistry, _ counters: [CounterFamily]) -> [UInt8] {
        var bytes = registry.emitToBuffer()
        for family in counters { family.emit(into: &bytes) }
        return bytes
    }
}
