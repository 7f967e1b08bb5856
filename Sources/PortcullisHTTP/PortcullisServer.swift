public import Hummingbird
public import Logging
public import NIOCore
public import PortcullisAuth
public import PortcullisStore
import Prometheus
public import ServiceLifecycle
import UnixSignals

/// The daemon: the service graph (`AuthServices`), the router over it, and the HTTP
/// server, run together.
///
/// Services start in order — the PostgreSQL pool, the invalidation listener, the other
/// background services, any extra ones, then (after migrations) the HTTP server — and
/// stop in reverse on graceful shutdown.
public struct PortcullisServer: Sendable {
    /// The concrete Hummingbird application type.
    public typealias App = Application<PortcullisResponder<RouterResponder<PortcullisRequestContext>>>

    /// The service graph (exposed for tests and the command line).
    public let services: AuthServices
    /// The runnable application.
    public let application: App

    /// The shared pool.
    public var database: Database { services.database }
    /// What SIGTERM does first (``Drain``).
    public let drain: Drain
    private let logger: Logger

    /// Builds the application.
    ///
    /// - Parameters:
    ///   - configuration: everything the server needs, already validated.
    ///   - logger: the logger of the server and every service.
    ///   - extra: services run beside the server (SIGHUP reload, …), made from the service graph.
    ///   - onServerRunning: called once the socket listens (sd_notify READY=1).
    public init(
        configuration: ServerConfiguration, logger: Logger, services extra: (AuthServices) -> [any Service] = { _ in [] },
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) throws {
        let metrics = HTTPMetrics(registry: PrometheusCollectorRegistry())
        // The services record into the same registry through swift-metrics, without the process-wide
        // bootstrap: several applications in one process (the tests) keep separate figures.
        let services = AuthServices(
            configuration: configuration.services,
            database: Database(settings: configuration.database, logger: logger, clock: configuration.clock),
            logger: logger, metrics: PrometheusMetricsFactory(registry: metrics.registry))
        let drain = Drain(delay: configuration.drainDelay)
        let router = buildRouter(services, configuration: configuration, metrics: metrics, drain: drain)
        var application = Application(
            responder: PortcullisResponder(
                inner: router.buildResponder(), metrics: metrics, databaseTimeout: configuration.database.requestTimeout),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        RequestTimeoutHandler(timeout: TimeAmount(configuration.requestTimeout)),
                        ExpectContinueHandler(maximumBodyBytes: PortcullisRequestContext.maximumBodyBytes),
                    ],
                    idleTimeout: TimeAmount(configuration.idleTimeout))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: services.backgroundServices + extra(services),
            onServerRunning: onServerRunning,
            logger: logger)
        application.beforeServerStarts { try await services.prepare() }
        self.services = services
        self.application = application
        self.drain = drain
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT, then drains: `/readyz` answers 503 for
    /// `listen.drain_seconds` while requests are still served, then the listener closes, the
    /// requests in flight finish, and every service stops (the ``Drain`` is registered last,
    /// so it is the first to shut down).
    public func run() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: [application, drain], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
