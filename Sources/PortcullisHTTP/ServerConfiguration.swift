import Hummingbird
public import PortcullisAuth
public import PortcullisCore
public import PortcullisCrypto
public import PortcullisStore

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
    /// After SIGTERM, how long `/readyz` answers 503 while requests are still served, before
    /// the listener closes (`listen.drain_seconds`; ``Drain``).
    public var drainDelay: Duration
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
    /// Signing keys of each algorithm made ahead for new tenants' first requests (0: on demand).
    public var signingKeyPoolSize = 4
    /// The bytes tenant state may hold in memory (`cache.tenant_bytes`).
    public var tenantCache = TenantCacheBudget()

    /// Creates a configuration.
    public init(
        projectId: String, publicURL: String, host: String = "127.0.0.1", port: Int = 8080,
        database: DatabaseSettings, apiKeys: [String] = [], cacheRefreshInterval: Duration = .seconds(60),
        masterKey: MasterKey, passwordHashing: ScryptParameters = .standard, abuseGuard: AbuseGuard = AbuseGuard(),
        keyRotationPeriod: Duration = .seconds(30 * 86_400), jwksMaxAgeSeconds: Int = 300, trustedProxies: [IPNetwork] = [],
        idleTimeout: Duration = .seconds(75), requestTimeout: Duration = .seconds(30), clock: any WallClock,
        outboundAllowedNetworks: [IPNetwork] = [], emailDelivery: EmailDeliveryService.Configuration = .init(),
        drainDelay: Duration = .zero
    ) {
        self.drainDelay = drainDelay
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

extension ServerConfiguration {
    /// What the service graph is built from.
    public var services: AuthServices.Configuration {
        var services = AuthServices.Configuration(
            projectId: projectId, publicURL: publicURL, defaultAPIKey: apiKeys.first, masterKey: masterKey,
            passwordHashing: passwordHashing, abuseGuard: abuseGuard, keyRotationPeriod: keyRotationPeriod,
            jwksMaxAgeSeconds: jwksMaxAgeSeconds, cacheRefreshInterval: cacheRefreshInterval,
            outboundAllowedNetworks: outboundAllowedNetworks, emailDelivery: emailDelivery, clock: clock)
        services.signingKeyPoolSize = signingKeyPoolSize
        services.tenantCache = tenantCache
        return services
    }
}
