public import PortcullisCore

/// Each tenant's provider configurations, in memory: every federated sign-in reads its
/// provider here rather than from PostgreSQL.
///
/// Loaded per tenant on first use and kept least-recently-used within their share of
/// `cache.tenant_bytes` (``TenantCacheBudget``). Dropped per tenant on the `NOTIFY` every
/// configuration write sends, and when the tenant is deleted; the listener's periodic flush
/// is the safety net.
public final class IdentityProviderCache: InvalidationSubscriber {
    private let repository: IdentityProviderRepository
    private let entries: GuardedCache<String, [String: IdentityProvider]>

    /// A cache over the repository, holding tenants' configurations whose `cost(of:)` adds
    /// up to at most `limit` bytes.
    public init(repository: IdentityProviderRepository, limit: Int = TenantCacheBudget().providers, metrics: CacheMetrics = .none) {
        self.repository = repository
        self.entries = GuardedCache(limit: limit, cost: Self.cost(of:), metrics: metrics)
    }

    /// About the heap a tenant's configurations hold: most tenants have none, and cost only
    /// the entry that says so.
    @Sendable static func cost(of providers: [String: IdentityProvider]) -> Int {
        providers.values.reduce(128) { bytes, provider in
            let optional: [String?] = [
                provider.displayName, provider.issuer, provider.jwksURI, provider.userInfoURI, provider.clientSecret,
                provider.revocationURI,
            ]
            let strings = [provider.providerId, provider.clientId] + provider.clientIds + optional.compactMap { $0 }
            return bytes + 1_024 + strings.reduce(0) { $0 + 16 + $1.utf8.count }
        }
    }

    /// The tenant's configuration of `providerId`, or `nil`.
    public func provider(_ providerId: String, tenant: TenantScope) async throws -> IdentityProvider? {
        try await providers(tenant: tenant)[providerId]
    }

    /// Every configuration of the tenant, by provider id.
    public func providers(tenant: TenantScope) async throws -> [String: IdentityProvider] {
        try await entries.value(for: tenant.key) {
            Dictionary(uniqueKeysWithValues: try await repository.list(tenant: tenant).map { ($0.providerId, $0) })
        }
    }

    public func invalidate(_ event: InvalidationEvent) {
        switch event {
        case .identityProviders(let tenant): entries.invalidate(tenant.key)
        case .tenant(let id, let version) where version == 0: entries.invalidate(id)
        default: return
        }
    }

    public func invalidateAll() {
        entries.invalidateAll()
    }
}
