/// How an end user is trying to create an account.
public enum SignUpMethod: Sendable, Equatable {
    /// Email and password (`accounts:signUp` with both).
    case password
    /// Anonymous (`accounts:signUp` without credentials).
    case anonymous
    /// A federated sign-in that would create a new user.
    case federated
}

/// The effective self-service switches of a tenant (or of the project's users).
///
/// Pure decisions over ``TenantSettings``: sign-up and self-deletion handlers
/// ask it before touching storage. The admin API never consults it.
public struct SelfServicePolicy: Sendable, Equatable {
    /// The settings the decisions read.
    public let settings: TenantSettings

    /// A policy over the given settings.
    public init(settings: TenantSettings) {
        self.settings = settings
    }

    /// Whether end users may create accounts themselves.
    public var allowsSelfSignUp: Bool { !settings.permissions.disabledUserSignup }

    /// Whether end users may delete their own accounts.
    public var allowsSelfDeletion: Bool { !settings.permissions.disabledUserDeletion }

    /// Any end-user request: `PROJECT_DISABLED` when the tenant has `disableAuth`.
    public func authorizeEndUserRequest() throws(AuthError) {
        if settings.disableAuth { throw AuthError(.projectDisabled) }
    }

    /// An end user creating an account.
    ///
    /// `ADMIN_ONLY_OPERATION` when self sign-up is disabled (and, as Firebase
    /// does, for anonymous sign-up while anonymous users are off);
    /// `OPERATION_NOT_ALLOWED` when password sign-up is off.
    public func authorizeSignUp(_ method: SignUpMethod) throws(AuthError) {
        try authorizeEndUserRequest()
        guard allowsSelfSignUp else { throw AuthError(.adminOnlyOperation) }
        switch method {
        case .password:
            guard settings.allowPasswordSignup else { throw AuthError(.operationNotAllowed) }
        case .anonymous:
            guard settings.enableAnonymousUser else { throw AuthError(.adminOnlyOperation) }
        case .federated:
            break
        }
    }

    /// An end user deleting their own account: `ADMIN_ONLY_OPERATION` when disabled.
    public func authorizeSelfDeletion() throws(AuthError) {
        try authorizeEndUserRequest()
        guard allowsSelfDeletion else { throw AuthError(.adminOnlyOperation) }
    }
}
