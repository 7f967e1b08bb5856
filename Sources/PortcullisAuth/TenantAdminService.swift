public import PortcullisCore
public import PortcullisStore

/// Tenant and project-config administration: validation, masks, and who may choose which
/// email channel. This instance's settings cache follows each write's commit (`Database.subscribers`).
public struct TenantAdminService: Sendable {
    let tenants: TenantRepository
    let projectConfig: ProjectConfigRepository
    let allowedFromDomains: [String]

    /// A service over the repositories.
    ///
    /// - Parameters:
    ///   - tenants: the tenants' storage.
    ///   - projectConfig: the project config's storage.
    ///   - allowedFromDomains: the domains a `SENDMAIL` sender may use (`email.allowed_from_domains`).
    public init(
        tenants: TenantRepository, projectConfig: ProjectConfigRepository, allowedFromDomains: [String]
    ) {
        self.tenants = tenants
        self.projectConfig = projectConfig
        self.allowedFromDomains = allowedFromDomains.map { $0.lowercased() }
    }

    /// Creates a tenant from a request body (every switch off unless set); only project keys create.
    /// A name the tenant resource does not have is `INVALID_ARGUMENT`.
    public func create(body: JSONValue, actor: String) async throws -> Tenant {
        try TenantSettings.schema(for: .tenant).check(body)
        let settings = try TenantSettings(json: body)
        try EmailDeliveryPolicy.authorize(
            settings.emailDelivery, replacing: nil, scope: .project, allowedFromDomains: allowedFromDomains)
        return try await tenants.create(settings: settings, actor: actor)
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

    /// Applies a PATCH: the masked fields from `body`, or the whole resource when the mask is empty.
    ///
    /// `scope` is the admin key's: a tenant key may not choose the `SENDMAIL` or `LOG`
    /// channel (`EmailDeliveryPolicy`).
    public func update(id: String, body: JSONValue, updateMask: String?, scope: AdminScope, actor: String) async throws -> Tenant {
        let change = try settingsPatch(body: body, updateMask: updateMask, resource: .tenant, scope: scope)
        guard TenantID.isValid(id), let tenant = try await tenants.update(id: id, actor: actor, change: change) else {
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

    /// PATCHes the project config with the same mask rules as a tenant.
    public func updateProjectConfig(body: JSONValue, updateMask: String?, actor: String) async throws -> ProjectConfig {
        try await projectConfig.update(
            actor: actor, change: settingsPatch(body: body, updateMask: updateMask, resource: .project, scope: .project))
    }

    /// The change a PATCH of `resource` by a key of `scope` makes. The whole body is
    /// validated first, as Google's front end does, so an unknown name or a wrong type outside
    /// the mask is still 400; the email channel is judged against the settings as stored
    /// when the change applies.
    func settingsPatch(
        body: JSONValue, updateMask: String?, resource: TenantSettings.Resource, scope: AdminScope
    ) throws -> @Sendable (TenantSettings) throws -> TenantSettings {
        let schema = TenantSettings.schema(for: resource)
        try schema.check(body)
        let mask = try FieldMask(parsing: updateMask, schema: schema)
        let patch = body.camelCasedKeys()
        _ = try TenantSettings(json: patch)
        let allowedFromDomains = allowedFromDomains
        return { current in
            let changed = try TenantSettings(json: mask.apply(patch, to: current.json))
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
