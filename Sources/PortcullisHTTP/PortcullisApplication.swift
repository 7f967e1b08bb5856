public import Hummingbird
public import Logging
public import NIOCore
public import PortcullisStore
import Prometheus
public import ServiceLifecycle

/// What the HTTP application needs to know, already validated.
public struct ServerConfiguration: Sendable {
    /// The project every path and token names.
    public var projectId: String
    /// Prefix of every issuer and action link.
    public var publicURL: String
    /// Listen address.
    public var host: String
    /// Listen port (0 picks a free one).
    public var port: Int
    /// PostgreSQL.
    public var database: DatabaseSettings
    /// End-user API keys (`?key=`).
    public var apiKeys: [String]
    /// How often every cache is flushed as a safety net behind LISTEN/NOTIFY.
    public var cacheRefreshInterval: Duration

    /// Creates a configuration.
    public init(
        projectId: String, publicURL: String, host: String = "127.0.0.1", port: Int = 8080,
        database: DatabaseSettings, apiKeys: [String] = [], cacheRefreshInterval: Duration = .seconds(60)
    ) {
        self.projectId = projectId
        self.publicURL = publicURL
        self.host = host
        self.port = port
        self.database = database
        self.apiKeys = apiKeys
        self.cacheRefreshInterval = cacheRefreshInterval
    }
}

/// The composition root: builds every component once and wires them.
///
/// Services start in order — PostgreSQL pool, the invalidation listener, any
/// extra services, then (after migrations) the HTTP server — and stop in
/// reverse on graceful shutdown.
public struct PortcullisServer: Sendable {
    /// The concrete Hummingbird application type.
    public typealias App = Application<PortcullisResponder<RouterResponder<PortcullisRequestContext>>>

    /// The shared pool.
    public let database: Database
    /// This instance's tenant-settings cache (exposed for tests and later services).
    public let tenantCache: TenantSettingsCache
    /// Admin-key issuance, shared with the CLI.
    public let adminKeys: AdminKeyService
    /// The runnable application.
    public let application: App

    /// Builds the application.
    ///
    /// - Parameters:
    ///   - services: extra services run beside the server (SIGHUP reload, …).
    ///   - onServerRunning: called once the socket listens (sd_notify READY=1).
    public init(
        configuration: ServerConfiguration, logger: Logger, services: [any Service] = [],
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) {
        let database = Database(settings: configuration.database, logger: logger)
        let tenants = TenantRepository(database: database, logger: logger)
        let projectConfig = ProjectConfigRepository(
            database: database, projectId: configuration.projectId, logger: logger)
        let cache = TenantSettingsCache(tenants: tenants, projectConfig: projectConfig)
        let migrator = Migrator(database: database, logger: logger)
        let metrics = HTTPMetrics(registry: PrometheusCollectorRegistry())
        let listener = InvalidationListener(
            database: database, subscribers: [cache], fullRefreshInterval: configuration.cacheRefreshInterval,
            logger: logger)

        let router = Router(context: PortcullisRequestContext.self)
        router.add(middleware: ErrorEnvelopeMiddleware())
        HealthRoutes(database: database, migrator: migrator, metrics: metrics).register(on: router)

        let tenantService = TenantAdminService(tenants: tenants, projectConfig: projectConfig, cache: cache)
        let adminKeyRepository = AdminKeyRepository(database: database, logger: logger)
        let adminKeys = AdminKeyService(keys: adminKeyRepository)
        let authenticator = AdminAuthenticator(keys: adminKeyRepository, projectId: configuration.projectId)
        let admin = router.group("v2/projects/{project}").add(middleware: authenticator)
        TenantRoutes(service: tenantService, projectId: configuration.projectId).register(on: admin)
        ProjectConfigRoutes(service: tenantService, projectId: configuration.projectId).register(on: admin)
        AdminKeyRoutes(service: adminKeys, projectId: configuration.projectId).register(on: admin)
        AuditRoutes(audit: AuditLogRepository(database: database, logger: logger)).register(on: admin)
        let legacyAdmin = router.group("admin/v2/projects/{project}").add(middleware: authenticator)
        ProjectConfigRoutes(service: tenantService, projectId: configuration.projectId).register(on: legacyAdmin)

        var application = Application(
            responder: PortcullisResponder(inner: router.buildResponder(), metrics: metrics),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: [database.client, listener] + services,
            onServerRunning: onServerRunning,
            logger: logger)
        application.beforeServerStarts {
            try await migrator.migrate()
        }
        self.database = database
        self.tenantCache = cache
        self.adminKeys = adminKeys
        self.application = application
    }

    /// Runs until SIGTERM or SIGINT, then drains in-flight requests and stops every service.
    public func run() async throws {
        try await application.runService()
    }
}
