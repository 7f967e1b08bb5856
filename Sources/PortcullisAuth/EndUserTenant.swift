public import PortcullisCore
public import PortcullisStore

/// The tenant an end-user request belongs to, resolved once at the operation's first hop
/// (DESIGN.md §2): its scope, its settings, and the check every end-user request passes
/// (`PROJECT_DISABLED` when the tenant takes none).
///
/// Every end-user operation starts by making one (``resolve(_:in:)``, or
/// `AccountService.endUserTenant(named:idToken:)` when the request may carry an ID token),
/// and reads its settings from it: an operation cannot have the settings without the check.
public struct EndUserTenant: Sendable {
    /// Whose users the request concerns.
    public let scope: TenantScope
    /// The scope's settings, as cached.
    public let settings: TenantSettings

    /// The request's tenant once its settings say it takes end-user requests; `PROJECT_DISABLED` otherwise.
    public init(_ scope: TenantScope, settings: TenantSettings) throws(AuthError) {
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        self.scope = scope
        self.settings = settings
    }

    /// Reads `scope`'s settings (`TENANT_NOT_FOUND` for an unknown tenant) and checks them.
    public static func resolve(_ scope: TenantScope, in tenants: TenantSettingsCache) async throws -> EndUserTenant {
        try EndUserTenant(scope, settings: try await tenants.settings(tenant: scope))
    }

    /// The self-service switches beyond the end-user check: sign-up and self-deletion.
    public var selfService: SelfServicePolicy { SelfServicePolicy(settings: settings) }
}
