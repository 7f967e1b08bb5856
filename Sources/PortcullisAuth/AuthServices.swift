public import CoreMetrics
import Foundation
public import Logging
public import PortcullisCore
public import PortcullisCrypto
import PortcullisOutbound
public import PortcullisStore
public import ServiceLifecycle

/// The service graph, built once: repositories, caches and services over one database,
/// and the background services that keep them running.
///
/// The daemon (`PortcullisServer`), the command line and the tests all build it here, so
/// each sees the same wiring: every cache is subscribed to the database's commits (and to
/// the listener's `NOTIFY`s while ``backgroundServices`` run), every service reads the
/// same injected clock.
public struct AuthServices: Sendable {
    /// What the services are built from, already validated.
    public struct Configuration: Sendable {
        /// The project every token and link names.
        public var projectId: String
        /// Prefix of every issuer and action link.
        public var publicURL: String
        /// The API key action links carry when the request named none.
        public var defaultAPIKey: String?
        /// Seals signing keys at rest; derives refresh-token successors and webhook secrets.
        public var masterKey: MasterKey
        /// scrypt parameters of new password hashes for tenants that set none.
        public var passwordHashing: ScryptParameters
        /// The hashing pool's bound on one tenant's queued hashes (`nil`: 32 a core; the pool
        /// holds four tenants' worth).
        public var maximumPendingHashes: Int?
        /// Abuse limits (shared with whoever reloads them).
        public var abuseGuard: AbuseGuard
        /// Age at which a tenant's signing key is rotated automatically.
        public var keyRotationPeriod: Duration
        /// The JWKS `max-age`; a scheduled rotation publishes the next key twice this ahead.
        public var jwksMaxAgeSeconds: Int
        /// How often every cache is flushed as a safety net behind LISTEN/NOTIFY.
        public var cacheRefreshInterval: Duration
        /// Networks outbound requests may reach although private (`outbound.allowed_private_networks`).
        public var outboundAllowedNetworks: [IPNetwork]
        /// Email-action delivery.
        public var emailDelivery: EmailDeliveryService.Configuration
        /// The time every service reads.
        public var clock: any WallClock
        /// Signing keys of each algorithm made ahead for new tenants' first requests
        /// (``SigningKeyPool``; 0: each key is made when it is needed).
        public var signingKeyPoolSize = 4
        /// The bytes tenant state may hold in memory (`cache.tenant_bytes`), shared among
        /// settings, keyrings and provider configurations.
        public var tenantCache = TenantCacheBudget()

        /// A configuration.
        public init(
            projectId: String, publicURL: String, defaultAPIKey: String?, masterKey: MasterKey, passwordHashing: ScryptParameters,
            maximumPendingHashes: Int? = nil, abuseGuard: AbuseGuard, keyRotationPeriod: Duration,
            jwksMaxAgeSeconds: Int, cacheRefreshInterval: Duration, outboundAllowedNetworks: [IPNetwork],
            emailDelivery: EmailDeliveryService.Configuration, clock: any WallClock
        ) {
            self.projectId = projectId
            self.publicURL = publicURL
            self.defaultAPIKey = defaultAPIKey
            self.masterKey = masterKey
            self.passwordHashing = passwordHashing
            self.maximumPendingHashes = maximumPendingHashes
            self.abuseGuard = abuseGuard
            self.keyRotationPeriod = keyRotationPeriod
            self.jwksMaxAgeSeconds = jwksMaxAgeSeconds
            self.cacheRefreshInterval = cacheRefreshInterval
            self.outboundAllowedNetworks = outboundAllowedNetworks
            self.emailDelivery = emailDelivery
            self.clock = clock
        }
    }

    /// The pool every repository shares.
    public let database: Database
    /// Tenant settings and the project config, cached.
    public let tenantSettings: TenantSettingsCache
    /// Password hashing on the shared hashing pool.
    public let passwords: PasswordHashingService
    /// Users' revocation state, cached (`checkRevoked`).
    public let revocation: RevocationCache
    /// Per-tenant keyrings.
    public let keyrings: KeyringService
    /// ID tokens and refresh sessions.
    public let tokens: TokenService
    /// End users' accounts.
    public let accounts: AccountService
    /// Admin user management.
    public let adminAccounts: AdminAccountService
    /// `signInWithIdp`.
    public let federated: FederatedSignInService
    /// `signInWithCustomToken`.
    public let customTokens: CustomTokenService
    /// Custom-token signers (admin).
    public let serviceAccounts: ServiceAccountService
    /// Identity-provider configuration (admin).
    public let identityProviders: IdentityProviderAdminService
    /// `accounts:revokeToken`.
    public let providerTokens: ProviderTokenRevocationService
    /// Email action codes.
    public let emailActions: EmailActionService
    /// The outbox and its delivery channels.
    public let emailDelivery: EmailDeliveryService
    /// Tenants and the project config (admin).
    public let tenantAdmin: TenantAdminService
    /// Admin keys.
    public let adminKeys: AdminKeyService
    /// `accounts:batchCreate`.
    public let userImports: UserImportService
    /// The audit log (admin).
    public let auditLog: AuditLogService
    /// Schema migrations.
    public let migrator: Migrator
    /// The background services, in start order: the database's pool, the signing-key pool,
    /// the invalidation listener, key rotation, the retention sweeper, email delivery.
    public let backgroundServices: [any Service]
    private let schema: SchemaGate

    /// Builds the graph over `database` (not yet running: ``backgroundServices`` runs its pool).
    public init(configuration: Configuration, database: Database, logger: Logger, metrics: any MetricsFactory) {
        let clock = configuration.clock
        self.database = database
        let tenants = TenantRepository(database: database, logger: logger)
        let projectConfig = ProjectConfigRepository(database: database, projectId: configuration.projectId, logger: logger)
        let budget = configuration.tenantCache
        let tenantSettings = TenantSettingsCache(
            tenants: tenants, projectConfig: projectConfig, limit: budget.settings,
            metrics: CacheMetrics(cache: "tenant_settings", factory: metrics))
        let users = UserRepository(database: database, logger: logger)
        let signingKeys = SigningKeyRepository(database: database, logger: logger)
        let keyPool = SigningKeyPool(size: configuration.signingKeyPoolSize)
        let keyrings = KeyringService(
            keys: signingKeys, tenants: tenantSettings, masterKey: configuration.masterKey,
            jwksMaxAgeSeconds: configuration.jwksMaxAgeSeconds, clock: clock, logger: logger,
            cacheLimit: budget.keyrings, cacheMetrics: CacheMetrics(cache: "keyrings", factory: metrics),
            generateKey: { try await keyPool.take($0) }, keyReady: { keyPool.available($0) > 0 })
        let revocation = RevocationCache(users: users)
        let verifiedTokens = VerifiedTokenCache()
        let sessions = RefreshSessionRepository(database: database, logger: logger)
        let tokens = TokenService(
            database: database, keyrings: keyrings, tenants: tenantSettings, sessions: sessions,
            successorKey: RefreshTokenKey(masterKey: configuration.masterKey), verified: verifiedTokens,
            projectId: configuration.projectId, publicURL: configuration.publicURL, clock: clock)
        passwords = PasswordHashingService(
            defaultParameters: configuration.passwordHashing,
            pool: HashingPool(maximumPendingPerTenant: configuration.maximumPendingHashes), metrics: metrics)
        let links = ProviderLinkRepository(database: database, logger: logger)
        let accounts = AccountService(
            database: database, users: users, links: links, tenants: tenantSettings, tokens: tokens, passwords: passwords,
            abuse: configuration.abuseGuard, clock: clock)
        let providerConfigs = IdentityProviderRepository(database: database, logger: logger)
        let providers = IdentityProviderCache(
            repository: providerConfigs, limit: budget.providers,
            metrics: CacheMetrics(cache: "identity_providers", factory: metrics))
        // One outbound client for everything the daemon fetches, under the operator's network policy.
        let outbound = OutboundHTTPClient(
            configuration: .init(policy: OutboundPolicy(allowedPrivateNetworks: configuration.outboundAllowedNetworks)),
            logger: logger)
        let serviceAccountRepository = ServiceAccountRepository(database: database, logger: logger)
        let serviceAccountKeys = ServiceAccountKeyCache(accounts: serviceAccountRepository)
        let audit = AuditLogRepository(database: database, logger: logger)
        let actionCodes = ActionCodeRepository(database: database, logger: logger)
        let outbox = EmailOutboxRepository(database: database, logger: logger)
        let schema = SchemaGate()
        let webhookKeys = WebhookSigningKeys(masterKey: configuration.masterKey)
        let emailDelivery = EmailDeliveryService(
            configuration: configuration.emailDelivery, outbox: outbox, tenants: tenantSettings, masterKey: configuration.masterKey,
            channels: [
                .webhook: WebhookEmailChannel(client: outbound, keys: webhookKeys, clock: clock),
                .sendmail: SendmailEmailChannel(
                    path: configuration.emailDelivery.sendmailPath, defaultFrom: configuration.emailDelivery.defaultFrom,
                    messageDomain: URLComponents(string: configuration.publicURL)?.host ?? "localhost", clock: clock),
                .log: LogEmailChannel(logger: logger),
            ], webhookKeys: webhookKeys, audit: audit, schema: schema, logger: logger)
        database.subscribers.add([tenantSettings, keyrings, revocation, verifiedTokens, providers, serviceAccountKeys])

        self.tenantSettings = tenantSettings
        self.revocation = revocation
        self.keyrings = keyrings
        self.tokens = tokens
        self.accounts = accounts
        adminAccounts = AdminAccountService(users: users, tenants: tenantSettings, passwords: passwords, clock: clock)
        federated = FederatedSignInService(
            database: database, tenants: tenantSettings, providers: providers,
            verifier: IdPTokenVerifier(client: outbound, keys: JWKSCache(client: outbound, clock: clock), clock: clock),
            users: users, links: links, accounts: accounts, tokens: tokens, abuse: configuration.abuseGuard, clock: clock)
        customTokens = CustomTokenService(
            users: users, tenants: tenantSettings, tokens: tokens, keys: serviceAccountKeys, clock: clock)
        serviceAccounts = ServiceAccountService(
            accounts: serviceAccountRepository, tenants: tenantSettings, projectId: configuration.projectId, clock: clock)
        identityProviders = IdentityProviderAdminService(repository: providerConfigs, cache: providers, tenants: tenantSettings)
        providerTokens = ProviderTokenRevocationService(accounts: accounts, providers: providers, client: outbound, audit: audit)
        self.emailDelivery = emailDelivery
        emailActions = EmailActionService(
            database: database, accounts: accounts, users: users, codes: actionCodes, outbox: outbox, audit: audit,
            tenants: tenantSettings, passwords: passwords, delivery: emailDelivery, masterKey: configuration.masterKey,
            links: .init(
                publicURL: configuration.publicURL, projectId: configuration.projectId, defaultAPIKey: configuration.defaultAPIKey),
            abuse: configuration.abuseGuard, clock: clock)
        tenantAdmin = TenantAdminService(
            tenants: tenants, projectConfig: projectConfig, allowedFromDomains: configuration.emailDelivery.allowedFromDomains,
            keyrings: keyrings)
        adminKeys = AdminKeyService(keys: AdminKeyRepository(database: database, logger: logger), clock: clock)
        userImports = UserImportService(users: users, tenants: tenantSettings, clock: clock)
        auditLog = AuditLogService(audit: audit, tenants: tenants)
        migrator = Migrator(database: database, logger: logger)
        self.schema = schema
        backgroundServices = [
            database,
            keyPool,
            InvalidationListener(database: database, fullRefreshInterval: configuration.cacheRefreshInterval, logger: logger),
            KeyRotationService(
                keys: signingKeys, keyrings: keyrings, period: configuration.keyRotationPeriod, schema: schema, logger: logger),
            RetentionSweeper(
                sessions: sessions, actionCodes: actionCodes,
                outbox: outbox, clock: clock, schema: schema, logger: logger),
            emailDelivery,
        ]
    }

    /// Readies the database before the first request: one direct connection first (a wrong
    /// address, login or TLS fails in seconds, by name), then the migrations; then the
    /// background services that need the tables start their work.
    public func prepare() async throws {
        try await database.probe()
        try await migrator.migrate()
        schema.open()
    }
}
