import Hummingbird
import PortcullisCore
import PortcullisStore
import Prometheus

/// `/healthz` (alive), `/readyz` (database reachable, schema current), `/metrics` (Prometheus).
struct HealthRoutes {
    let database: Database
    let migrator: Migrator
    let metrics: HTTPMetrics

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("healthz") { _, _ in
            JSONResponse.make(.object(["status": .string("ok")]))
        }
        router.get("readyz") { _, _ in
            guard await database.ping() else { throw AuthError(.unavailable, detail: "database unreachable") }
            guard await migrator.isCurrent() else { throw AuthError(.unavailable, detail: "migrations pending") }
            return JSONResponse.make(.object(["status": .string("ok")]))
        }
        let inUse = metrics.registry.makeGauge(name: "portcullis_db_connections_in_use")
        let maximum = metrics.registry.makeGauge(name: "portcullis_db_connections_max")
        router.get("metrics") { _, _ in
            inUse.set(Int64(database.connectionsInUse))
            maximum.set(Int64(database.settings.maximumConnections))
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
        }
    }
}
