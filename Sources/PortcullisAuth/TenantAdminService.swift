public import PortcullisCore
import PortcullisJSON
public import PortcullisStore
import Synchronization

/// Tenant and project-config administration: ids, pages, and who may choose which email
/// channel. This instance's settings cache follows each write's commit (`Database.subscribers`).
public struct TenantAdminService: Sendable {
    let tenants: TenantRepository
    let projectConfig: ProjectConfigRepository
    let allowedFromDomains: [String]
    let keyrings: KeyringService
    /// The creations running on this instance.
    private let creations = CreationCount()

    /// A service over the repositories.
    ///
    /// - Parameters:
    ///   - tenants: the tenants' storage.
    ///   - projectConfig: the project config's storage.
    ///   - allowedFromDomains: the domains a `SENDMAIL` sender may use (`email.allowed_from_domains`).
    ///   - keyrings: the keyrings, which ready a new tenant's first key.
    public init(
        tenants: TenantRepository, projectConfig: ProjectConfigRepository, allowedFromDomains: [String], keyrings: KeyringService
    ) {
        self.tenants = tenants
        self.projectConfig = projectConfig
        self.allowedFromDomains = allowedFromDomains.map { $0.lowercased() }
        self.keyrings = keyrings
    }

    /// Creates a tenant with `settings`; only project keys create.
    ///
    /// A tenant created on its own (no other creation running here) gets its first signing key
    /// once it is committed, when one is ready-made (``KeyringService/prepare(tenant:algorithm:)``):
    /// a few milliseconds here, none of the tenant's first sign-in's. Among other creations (a
    /// bulk load) the key is left to the tenant's first request: it is a second write
    /// transaction, which a bulk load of ES256 tenants (whose keys are always ready) would pay
    /// on every one.
    public func create(settings: TenantSettings, actor: String) async throws -> Tenant {
        try EmailDeliveryPolicy.authorize(
            settings.emailDelivery, replacing: nil, scope: .project, allowedFromDomains: allowedFromDomains)
        let alone = creations.value.wrappingAdd(1, ordering: .relaxed).newValue == 1
        defer { creations.value.wrappingSubtract(1, ordering: .relaxed) }
        let tenant = try await tenants.create(settings: settings, actor: actor)
        if alone { await keyrings.prepare(tenant: .tenant(tenant.id), algorithm: settings.signingAlgorithm) }
        return tenant
    }

    /// The tenant; `TENANT_NOT_FOUND` when absent.
    public func get(id: String) async throws -> Tenant {
        guard TenantID.isValid(id), let tenant = try await tenants.find(id: id) else {
            throw AuthError(.tenantNotFound)
        }
        return tenant
    }

    /// One page of tenants and the token of the next page, if any.
    public func list(pageSize: Int?, pageToken: String?) async throws -> (tenants: [Tenant], nextPageToken: String?) {
        let size = pageSize ?? 20
        guard (1...1000).contains(size) else {
            throw AuthError(.invalidArgument, detail: "pageSize must be between 1 and 1000")
        }
        var after: String?
        if let pageToken, !pageToken.isEmpty {
            guard let decoded = PageToken.decode(pageToken) else {
                throw AuthError(.invalidArgument, detail: "Invalid page token")
            }
            after = decoded
        }
        let page = try await tenants.list(after: after, limit: size + 1)
        let visible = Array(page.prefix(size))
        let next = page.count > size ? visible.last.map { PageToken.encode($0.id) } : nil
        return (visible, next)
    }

    /// Applies `change` (a PATCH) to the tenant's settings as stored, under the row's lock.
    ///
    /// `scope` is the admin key's: a tenant key may not choose the `SENDMAIL` or `LOG`
    /// channel (`EmailDeliveryPolicy`).
    public func update(
        id: String, change: @escaping @Sendable (TenantSettings) throws -> TenantSettings, scope: AdminScope, actor: String
    ) async throws -> Tenant {
        guard TenantID.isValid(id),
            let tenant = try await tenants.update(id: id, actor: actor, change: authorized(change, scope: scope))
        else {
            throw AuthError(.tenantNotFound)
        }
        return tenant
    }

    /// Deletes a tenant; `TENANT_NOT_FOUND` when absent.
    public func delete(id: String, actor: String) async throws {
        guard TenantID.isValid(id), try await tenants.delete(id: id, actor: actor) else {
            throw AuthError(.tenantNotFound)
        }
    }

    /// The project's own config.
    public func projectConfig() async throws -> ProjectConfig {
        try await projectConfig.get()
    }

    /// Applies `change` (a PATCH) to the project config, as a tenant's.
    public func updateProjectConfig(
        change: @escaping @Sendable (TenantSettings) throws -> TenantSettings, actor: String
    ) async throws -> ProjectConfig {
        try await projectConfig.update(actor: actor, change: authorized(change, scope: .project))
    }

    /// `change`, refused when the email channel it leaves is not one a key of `scope` may
    /// choose, judged against the settings as stored when the change applies.
    func authorized(
        _ change: @escaping @Sendable (TenantSettings) throws -> TenantSettings, scope: AdminScope
    ) -> @Sendable (TenantSettings) throws -> TenantSettings {
        let allowedFromDomains = allowedFromDomains
        return { current in
            let changed = try change(current)
            try EmailDeliveryPolicy.authorize(
                changed.emailDelivery, replacing: current.emailDelivery, scope: scope, allowedFromDomains: allowedFromDomains)
            return changed
        }
    }
}

/// Opaque page tokens: base64url of the last item's key.
enum PageToken {
    static func encode(_ key: String) -> String {
        Base64URL.encode(Array(key.utf8))
    }

    static func decode(_ token: String) -> String? {
        Base64URL.decode(token).flatMap { String(validating: $0, as: UTF8.self) }
    }
}

/// A count shared by the copies of a service.
private final class CreationCount: Sendable {
    let value = Atomic<Int>(0)
}
