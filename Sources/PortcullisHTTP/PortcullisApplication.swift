import Foundation
public import Hummingbird
public import Logging
public import NIOCore
public import PortcullisAuth
public import PortcullisCore
public import PortcullisCrypto
import PortcullisOutbound
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
    /// Seals signing keys at rest.
    public var masterKey: MasterKey
    /// scrypt parameters of new password hashes for tenants that set none (`scryptParameters`).
    public var passwordHashing: ScryptParameters
    /// Abuse limits (shared with whoever reloads them).
    public var abuseGuard: AbuseGuard
    /// Age at which a tenant's signing key is rotated automatically.
    public var keyRotationPeriod: Duration
    /// The JWKS `max-age`; a scheduled rotation publishes the next key twice this ahead.
    public var jwksMaxAgeSeconds: Int
    /// Peers whose `X-Forwarded-For` names the client (`trusted_proxies`).
    public var trustedProxies: [IPNetwork]
    /// A connection with nothing to read or write for this long is closed (`listen.idle_timeout_seconds`).
    public var idleTimeout: Duration
    /// A request must be read whole within this long of its head (`listen.request_timeout_seconds`).
    public var requestTimeout: Duration
    /// The time every service reads (tests set it by hand).
    public var clock: any WallClock
    /// Networks outbound requests (IdP JWKS and user-info, webhooks) may reach although
    /// private, loopback or link-local, over plain http too (`outbound.allowed_private_networks`).
    public var outboundAllowedNetworks: [IPNetwork]
    /// Email-action delivery: the default channel, sendmail, retries (`email.*`).
    public var emailDelivery: EmailDeliveryService.Configuration
    /// Whether `Authorization: Bearer owner`, the credential the Firebase Admin SDKs send to
    /// an emulator, is a project admin key. Only `portcullis dev` turns it on; never in production.
    public var acceptsEmulatorAdminCredential = false

    /// Creates a configuration.
    public init(
        projectId: String, publicURL: String, host: String = "127.0.0.1", port: Int = 8080,
        database: DatabaseSettings, apiKeys: [String] = [], cacheRefreshInterval: Duration = .seconds(60),
        masterKey: MasterKey, passwordHashing: ScryptParameters = .standard, abuseGuard: AbuseGuard = AbuseGuard(),
        keyRotationPeriod: Duration = .seconds(30 * 86_400), jwksMaxAgeSeconds: Int = 300, trustedProxies: [IPNetwork] = [],
        idleTimeout: Duration = .seconds(75), requestTimeout: Duration = .seconds(30), clock: any WallClock,
        outboundAllowedNetworks: [IPNetwork] = [], emailDelivery: EmailDeliveryService.Configuration = .init()
    ) {
        self.projectId = projectId
        self.publicURL = publicURL
        self.host = host
        self.port = port
        self.database = database
        self.apiKeys = apiKeys
        self.cacheRefreshInterval = cacheRefreshInterval
        self.masterKey = masterKey
        self.passwordHashing = passwordHashing
        self.abuseGuard = abuseGuard
        self.keyRotationPeriod = keyRotationPeriod
        self.jwksMaxAgeSeconds = jwksMaxAgeSeconds
        self.trustedProxies = trustedProxies
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.clock = clock
        self.outboundAllowedNetworks = outboundAllowedNetworks
        self.emailDelivery = emailDelivery
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
    /// Tokens (exposed for tests).
    public let tokens: TokenService
    /// The runnable application.
    public let application: App

    /// Builds the application.
    ///
    /// - Parameters:
    ///   - configuration: everything the server needs, already validated.
    ///   - logger: the logger of the server and every service.
    ///   - services: extra services run beside the server (SIGHUP reload, …).
    ///   - onServerRunning: called once the socket listens (sd_notify READY=1).
    public init(
        configuration: ServerConfiguration, logger: Logger, services: [any Service] = [],
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) throws {
        let database = Database(settings: configuration.database, logger: logger)
        let tenants = TenantRepository(database: database, logger: logger)
        let projectConfig = ProjectConfigRepository(
            database: database, projectId: configuration.projectId, logger: logger)
        let cache = TenantSettingsCache(tenants: tenants, projectConfig: projectConfig)
        let migrator = Migrator(database: database, logger: logger)
        let metrics = HTTPMetrics(registry: PrometheusCollectorRegistry())
        // The services record into the same registry through swift-metrics, without the process-wide
        // bootstrap: several applications in one process (the tests) keep separate figures.
        let metricsFactory = PrometheusMetricsFactory(registry: metrics.registry)
        let users = UserRepository(database: database, logger: logger)
        let signingKeys = SigningKeyRepository(database: database, logger: logger)
        let keyrings = KeyringService(
            keys: signingKeys, tenants: cache, masterKey: configuration.masterKey,
            jwksMaxAgeSeconds: configuration.jwksMaxAgeSeconds, clock: configuration.clock, logger: logger)
        let revocation = RevocationCache(users: users)
        let verifiedTokens = VerifiedTokenCache()
        let sessions = RefreshSessionRepository(database: database, logger: logger)
        let tokens = TokenService(
            keyrings: keyrings, tenants: cache, sessions: sessions,
            successorKey: RefreshTokenKey(masterKey: configuration.masterKey), verified: verifiedTokens,
            projectId: configuration.projectId, publicURL: configuration.publicURL, clock: configuration.clock,
            metrics: metricsFactory)
        let passwords = PasswordHashingService(
            defaultParameters: configuration.passwordHashing, pool: HashingPool(), metrics: metricsFactory)
        let links = ProviderLinkRepository(database: database, logger: logger)
        let accounts = AccountService(
            users: users, links: links, tenants: cache, tokens: tokens, passwords: passwords,
            abuse: configuration.abuseGuard, clock: configuration.clock)
        let adminAccounts = AdminAccountService(
            users: users, tenants: cache, passwords: passwords, clock: configuration.clock)
        let identityProviders = IdentityProviderCache(
            repository: IdentityProviderRepository(database: database, logger: logger))
        // One outbound client for everything the daemon fetches, under the operator's network policy.
        let outbound = OutboundHTTPClient(
            configuration: .init(policy: OutboundPolicy(allowedPrivateNetworks: configuration.outboundAllowedNetworks)),
            logger: logger)
        let federated = FederatedSignInService(
            tenants: cache, providers: identityProviders,
            verifier: IdPTokenVerifier(
                client: outbound, keys: JWKSCache(client: outbound, clock: configuration.clock), clock: configuration.clock),
            users: users, links: links, accounts: accounts, tokens: tokens,
            abuse: configuration.abuseGuard, clock: configuration.clock)
        let serviceAccountRepository = ServiceAccountRepository(database: database, logger: logger)
        let serviceAccountKeys = ServiceAccountKeyCache(accounts: serviceAccountRepository)
        let customTokens = CustomTokenService(
            users: users, tenants: cache, tokens: tokens, keys: serviceAccountKeys, clock: configuration.clock)
        database.subscribers.add([cache, keyrings, revocation, verifiedTokens, identityProviders, serviceAccountKeys])
        let listener = InvalidationListener(
            database: database, fullRefreshInterval: configuration.cacheRefreshInterval, logger: logger)
        // Opened once migrations are current: the background services that need the tables wait on it.
        let schema = SchemaGate()
        let rotation = KeyRotationService(
            keys: signingKeys, keyrings: keyrings, period: configuration.keyRotationPeriod, schema: schema, logger: logger)
        let audit = AuditLogRepository(database: database, logger: logger)
        let outbox = EmailOutboxRepository(database: database, logger: logger)
        let actionCodes = ActionCodeRepository(database: database, users: users, logger: logger)
        let sweeper = RetentionSweeper(
            sessions: sessions, actionCodes: actionCodes, outbox: outbox, clock: configuration.clock, schema: schema,
            logger: logger)
        let publicHost = URLComponents(string: configuration.publicURL)?.host ?? "localhost"
        let webhookKeys = WebhookSigningKeys(masterKey: configuration.masterKey)
        let emailDelivery = EmailDeliveryService(
            configuration: configuration.emailDelivery, outbox: outbox,
            tenants: cache, masterKey: configuration.masterKey,
            channels: [
                .webhook: WebhookEmailChannel(client: outbound, keys: webhookKeys, clock: configuration.clock),
                .sendmail: SendmailEmailChannel(
                    path: configuration.emailDelivery.sendmailPath, defaultFrom: configuration.emailDelivery.defaultFrom,
                    messageDomain: publicHost, clock: configuration.clock),
                .log: LogEmailChannel(logger: logger),
            ], webhookKeys: webhookKeys, audit: audit, schema: schema, logger: logger)
        let emailActions = EmailActionService(
            accounts: accounts, users: users,
            codes: actionCodes, tenants: cache,
            passwords: passwords, delivery: emailDelivery, masterKey: configuration.masterKey,
            links: .init(
                publicURL: configuration.publicURL, projectId: configuration.projectId,
                defaultAPIKey: configuration.apiKeys.first),
            abuse: configuration.abuseGuard, clock: configuration.clock)

        let router = Router(context: PortcullisRequestContext.self)
        router.add(middleware: ErrorEnvelopeMiddleware())
        if !configuration.trustedProxies.isEmpty {
            router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
        }
        HealthRoutes(database: database, migrator: migrator, metrics: metrics).register(on: router)

        let tenantService = TenantAdminService(
            tenants: tenants, projectConfig: projectConfig, allowedFromDomains: configuration.emailDelivery.allowedFromDomains)
        let adminKeys = AdminKeyService(
            keys: AdminKeyRepository(database: database, logger: logger), clock: configuration.clock)
        let authenticator = AdminAuthenticator(
            keys: adminKeys, projectId: configuration.projectId,
            acceptsEmulatorAdminCredential: configuration.acceptsEmulatorAdminCredential)
        let admin = router.group("v2/projects/{project}").add(middleware: authenticator)
        TenantRoutes(service: tenantService, projectId: configuration.projectId).register(on: admin)
        ProjectConfigRoutes(service: tenantService, projectId: configuration.projectId).register(on: admin)
        AdminKeyRoutes(service: adminKeys, projectId: configuration.projectId).register(on: admin)
        AuditRoutes(audit: audit, tenants: tenants).register(on: admin)
        IdentityProviderRoutes(
            service: IdentityProviderAdminService(
                repository: IdentityProviderRepository(database: database, logger: logger), cache: identityProviders,
                tenants: cache),
            projectId: configuration.projectId
        ).register(on: admin)
        ServiceAccountRoutes(
            service: ServiceAccountService(
                accounts: serviceAccountRepository, tenants: cache, projectId: configuration.projectId,
                clock: configuration.clock),
            projectId: configuration.projectId
        ).register(on: admin)
        WebhookSecretRoutes(delivery: emailDelivery).register(on: admin)
        let legacyAdmin = router.group("admin/v2/projects/{project}").add(middleware: authenticator)
        ProjectConfigRoutes(service: tenantService, projectId: configuration.projectId).register(on: legacyAdmin)

        let keyRoutes = KeyRoutes(
            keyrings: keyrings, tokens: tokens, tenants: cache, projectId: configuration.projectId,
            publicURL: configuration.publicURL)
        keyRoutes.registerPublic(on: router)
        keyRoutes.registerAdmin(on: admin)
        let adminV1 = router.group("v1/projects/{project}").add(middleware: authenticator)
        AdminAccountRoutes(accounts: adminAccounts).register(on: adminV1)
        let emailActionRoutes = EmailActionRoutes(emailActions: emailActions)
        emailActionRoutes.registerAdmin(on: adminV1)
        UserImportRoutes(
            imports: UserImportService(users: users, tenants: cache, clock: configuration.clock)
        ).register(on: adminV1)
        let apiKeys = APIKeyMiddleware(keys: configuration.apiKeys)
        let endUser = router.group("v1").add(middleware: apiKeys)
        AccountRoutes(accounts: accounts, emailActions: emailActions).register(on: endUser)
        emailActionRoutes.register(on: endUser)
        ActionPageRoutes(
            emailActions: emailActions, apiKeys: apiKeys, formTokens: ActionFormTokens(masterKey: configuration.masterKey)
        ).register(on: router)
        FederatedSignInRoutes(service: federated).register(on: endUser)
        CustomTokenRoutes(customTokens: customTokens).register(on: endUser)
        TokenRoutes(tokens: tokens).register(on: endUser)
        PublicProjectConfigRoutes(tenants: cache, projectId: configuration.projectId, publicURL: configuration.publicURL)
            .register(on: endUser)
        ClientConfigRoutes(
            tenants: cache,
            revocation: ProviderTokenRevocationService(
                accounts: accounts, providers: identityProviders, client: outbound, audit: audit)
        ).register(on: router.group("v2").add(middleware: apiKeys))
        VerifyRoutes(tokens: tokens, revocation: revocation).register(on: router)

        let requestTimeout = TimeAmount(configuration.requestTimeout)
        var application = Application(
            responder: PortcullisResponder(
                inner: router.buildResponder(), metrics: metrics, databaseTimeout: configuration.database.requestTimeout),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        RequestTimeoutHandler(timeout: requestTimeout),
                        ExpectContinueHandler(maximumBodyBytes: PortcullisRequestContext.maximumBodyBytes),
                    ],
                    idleTimeout: TimeAmount(configuration.idleTimeout))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: [database.client, listener, rotation, sweeper, emailDelivery] + services,
            onServerRunning: onServerRunning,
            logger: logger)
        application.beforeServerStarts {
            // One direct connection first: a wrong address, login or TLS fails in seconds, by name.
            try await database.probe()
            try await migrator.migrate()
            schema.open()
        }
        self.database = database
        self.tenantCache = cache
        self.adminKeys = adminKeys
        self.tokens = tokens
        self.application = application
    }

    /// Runs until SIGTERM or SIGINT, then drains in-flight requests and stops every service.
    public func run() async throws {
        try await application.runService()
    }
}
