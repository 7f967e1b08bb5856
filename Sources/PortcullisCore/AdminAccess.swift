/// What an admin key may manage.
public enum AdminScope: Sendable, Equatable, Hashable {
    /// Everything in the project: all tenants, project config, admin keys.
    case project
    /// One tenant's resources only.
    case tenant(String)

    /// The tenant id of a tenant scope, `nil` for the project.
    public var tenantId: String? {
        if case .tenant(let id) = self { return id }
        return nil
    }
}

/// The resource an admin request acts on.
public enum AdminTarget: Sendable, Equatable {
    /// Project-level resources: the tenant list, project config, admin keys, tenant deletion.
    case project
    /// One tenant's resources.
    case tenant(String)
}

/// An authenticated admin caller.
public struct AdminPrincipal: Sendable, Equatable {
    /// The admin key's id (never its secret).
    public let keyId: String
    /// What the key may manage.
    public let scope: AdminScope

    /// Creates a principal.
    public init(keyId: String, scope: AdminScope) {
        self.keyId = keyId
        self.scope = scope
    }

    /// The audit log's name for this caller.
    public var actor: String { "adminKey:\(keyId)" }

    /// `PERMISSION_DENIED` unless the key's scope covers the target.
    ///
    /// A project key covers everything; a tenant key covers its own tenant only.
    public func authorize(_ target: AdminTarget) throws(AuthError) {
        switch (scope, target) {
        case (.project, _):
            return
        case (.tenant(let own), .tenant(let requested)) where own == requested:
            return
        default:
            throw AuthError(.permissionDenied)
        }
    }
}
