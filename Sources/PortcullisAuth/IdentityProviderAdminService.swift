public import PortcullisCore
public import PortcullisStore

/// Administration of federated provider configurations: Identity Platform's
/// `defaultSupportedIdpConfigs` (built-in providers) and `oauthIdpConfigs` (`oidc.*`).
public struct IdentityProviderAdminService: Sendable {
    let repository: IdentityProviderRepository
    let cache: IdentityProviderCache
    let tenants: TenantSettingsCache

    /// Which admin resource a configuration belongs to.
    public enum Kind: Sendable {
        /// `defaultSupportedIdpConfigs`: `google.com`, `apple.com`, …
        case builtIn
        /// `oauthIdpConfigs`: `oidc.<name>`.
        case oidc

        /// Whether `providerId` is a configuration of this kind.
        public func accepts(_ providerId: String) -> Bool {
            switch self {
            case .builtIn: IdentityProvider.builtIn.contains(providerId)
            case .oidc: IdentityProvider.isOIDC(providerId)
            }
        }
    }

    /// A service over the repository, this instance's cache, and the tenants.
    public init(repository: IdentityProviderRepository, cache: IdentityProviderCache, tenants: TenantSettingsCache) {
        self.repository = repository
        self.cache = cache
        self.tenants = tenants
    }

    /// Creates `providerId`'s configuration, read by `configuration` once the tenant and the
    /// id are known to be good.
    ///
    /// `INVALID_ARGUMENT` when the id is not one of `kind`'s (a built-in provider name, or
    /// `oidc.` and 1–64 letters, digits, `-`, `_`, `.`); `CONFIGURATION_EXISTS` when it is
    /// configured already.
    public func create(
        kind: Kind, providerId: String?, tenant: TenantScope, actor: String,
        configuration: (_ providerId: String) throws -> IdentityProvider
    ) async throws -> IdentityProvider {
        try await requireTenant(tenant)
        guard let providerId, kind.accepts(providerId) else {
            throw AuthError(
                .invalidArgument,
                detail: kind == .builtIn
                    ? "idpId must be one of \(IdentityProvider.builtIn.joined(separator: ", "))"
                    : "oauthIdpConfigId must be oidc. followed by 1 to 64 letters, digits, '-', '_' or '.'")
        }
        let provider = try configuration(providerId)
        try await repository.create(provider, tenant: tenant, actor: actor)
        return provider
    }

    /// The configuration; `CONFIGURATION_NOT_FOUND` when absent or of the other kind.
    public func get(kind: Kind, providerId: String, tenant: TenantScope) async throws -> IdentityProvider {
        try await requireTenant(tenant)
        guard kind.accepts(providerId), let provider = try await cache.provider(providerId, tenant: tenant) else {
            throw AuthError(.configurationNotFound)
        }
        return provider
    }

    /// Every configuration of `kind` for the tenant, ordered by id.
    public func list(kind: Kind, tenant: TenantScope) async throws -> [IdentityProvider] {
        try await requireTenant(tenant)
        return try await repository.list(tenant: tenant).filter { kind.accepts($0.providerId) }
    }

    /// Applies `change` (a PATCH) to the configuration as stored, under the row's lock.
    public func update(
        kind: Kind, providerId: String, tenant: TenantScope, actor: String,
        change: @escaping @Sendable (IdentityProvider) throws -> IdentityProvider
    ) async throws -> IdentityProvider {
        try await requireTenant(tenant)
        guard kind.accepts(providerId),
            let updated = try await repository.update(tenant: tenant, providerId: providerId, actor: actor, change: change)
        else { throw AuthError(.configurationNotFound) }
        return updated
    }

    /// Deletes the configuration; `CONFIGURATION_NOT_FOUND` when absent.
    public func delete(kind: Kind, providerId: String, tenant: TenantScope, actor: String) async throws {
        try await requireTenant(tenant)
        guard kind.accepts(providerId), try await repository.delete(tenant: tenant, providerId: providerId, actor: actor)
        else { throw AuthError(.configurationNotFound) }
    }

    private func requireTenant(_ tenant: TenantScope) async throws {
        do {
            _ = try await tenants.settings(tenant: tenant)
        } catch let error as AuthError {
            throw error.onResourcePath()
        }
    }
}
