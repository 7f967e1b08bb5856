/// A write the stored state refused, named by the rule of the model it would have broken.
///
/// Storage reports what it ran into (a unique index, a tenant deleted meanwhile) without
/// choosing what the caller is told: ``AuthError/init(_:)-(Conflict)`` is the one place that gives each
/// conflict its wire code, and a service that reads a conflict differently (a sign-up that
/// retries after losing a race) catches it by name.
public enum Conflict: Error, Sendable, Hashable {
    /// Another user of the tenant has the email (case-insensitively).
    case emailTaken
    /// A user of the tenant has the uid.
    case uidTaken
    /// The federated identity is linked to another user of the tenant.
    case identityLinked
    /// The tenant the write belongs to does not exist (any more).
    case tenantMissing
    /// The tenant has a service account with the key id.
    case serviceAccountKeyTaken
    /// The tenant has a configuration for the provider.
    case providerConfigured
}

extension Conflict: CustomStringConvertible {
    /// The answer's explanation and code, as an `AuthError` prints (the command line shows it).
    public var description: String { AuthError(self).description }
}

extension AuthError {
    /// The answer to a write that `conflict` refused.
    public init(_ conflict: Conflict) {
        switch conflict {
        case .emailTaken: self.init(.emailExists)
        case .uidTaken: self.init(.duplicateLocalId)
        case .identityLinked: self.init(.federatedUserIdAlreadyLinked)
        case .tenantMissing: self.init(.tenantNotFound)
        case .serviceAccountKeyTaken: self.init(.invalidArgument, detail: "A service account with this key id exists")
        case .providerConfigured: self.init(.configurationExists)
        }
    }
}
