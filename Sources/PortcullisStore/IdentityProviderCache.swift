public import PortcullisCore

/// Each tenant's provider configurations, in memory: every federated sign-in reads its
/// provider here rather than from PostgreSQL.
///
/// Dropped per tenant on the `NOTIFY` every configuration write sends, and when the
/// tenant is deleted; the listener's periodic flush is the safety net.
public final class IdentityProviderCache: InvalidationSubscriber {
    private let repository: IdentityProviderRepository
    private let entries = GuardedCache<String, [String: IdentityProvider]>(capacity: 20_000)

    /// A cache over the repository.
    public init(repository: IdentityProviderRepository) {
        self.repository = repository
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
