/// The self-service configuration of a tenant, or of the project's own users.
///
/// Field names follow Identity Platform's tenant resource; the Portcullis
/// extensions (signing algorithm, lifetimes, trusted domains) sit beside them.
/// As in Identity Platform, every switch is off unless a request sets it.
public struct TenantSettings: Sendable, Equatable {
    /// Human-readable name (`displayName`).
    public var displayName: String?
    /// Whether email/password sign-up and sign-in are enabled.
    public var allowPasswordSignup = false
    /// Whether email-link sign-in is enabled.
    public var enableEmailLinkSignin = false
    /// When set, every end-user request for the tenant fails with `PROJECT_DISABLED`.
    public var disableAuth = false
    /// Whether anonymous sign-up is enabled.
    public var enableAnonymousUser = false
    /// `client.permissions`: the self-service switches.
    public var permissions = ClientPermissions()
    /// `emailPrivacyConfig.enableImprovedEmailPrivacy`: email-enumeration protection.
    public var enableImprovedEmailPrivacy = false
    /// `passwordPolicyConfig`.
    public var passwordPolicy = PasswordPolicy()
    /// Algorithm of the tenant's ID-token signing keys.
    public var signingAlgorithm = SigningAlgorithm.rs256
    /// ID-token lifetime, 1 – 86400 s.
    public var idTokenLifetimeSeconds = 3600
    /// How recent a sign-in sensitive actions need, 1 – 86400 s.
    public var recentLoginWindowSeconds = 300
    /// How long a rotated refresh token may still be replayed, 0 – 300 s.
    public var refreshTokenReuseGraceSeconds = 10
    /// Lifetime of email action codes, 1 – 604800 s.
    public var oobCodeLifetimeSeconds = 3600
    /// (provider, domain) pairs the tenant trusts in addition to the built-in table.
    public var trustedEmailDomains: [TrustedEmailDomain] = []
    /// scrypt cost for the tenant's new password hashes; `nil`: the daemon's default
    /// (N = 2^14, r = 8, p = 1). Existing hashes keep theirs until the next sign-in.
    public var scryptParameters: ScryptParameters?
    /// Hosts (and their subdomains) an email action's `continueUrl` may name, besides
    /// `localhost` and the gateway's public host (Identity Platform's authorized domains).
    public var authorizedDomains: [String] = []
    /// How email actions are delivered; `nil`: the daemon's default channel.
    public var emailDelivery: EmailDelivery?

    /// Settings with every default.
    public init() {}

    /// `client.permissions` of Identity Platform.
    public struct ClientPermissions: Sendable, Equatable {
        /// End users may not create accounts themselves.
        public var disabledUserSignup = false
        /// End users may not delete their own accounts.
        public var disabledUserDeletion = false

        /// Both switches off.
        public init(disabledUserSignup: Bool = false, disabledUserDeletion: Bool = false) {
            self.disabledUserSignup = disabledUserSignup
            self.disabledUserDeletion = disabledUserDeletion
        }
    }

    /// The password rules of `passwordPolicyConfig` (one policy version).
    public struct PasswordPolicy: Sendable, Equatable {
        /// `ENFORCE` or `OFF`; with `OFF` only the minimum length of 6 applies.
        public var enforcementState = EnforcementState.off
        /// Whether sign-in with a non-compliant password must upgrade it.
        public var forceUpgradeOnSignin = false
        /// Minimum length, 6 – 30.
        public var minPasswordLength = 6
        /// Maximum length, up to 4096.
        public var maxPasswordLength = 4096
        /// Require a lowercase letter.
        public var containsLowercaseCharacter = false
        /// Require an uppercase letter.
        public var containsUppercaseCharacter = false
        /// Require a digit.
        public var containsNumericCharacter = false
        /// Require a character that is neither a letter nor a digit.
        public var containsNonAlphanumericCharacter = false

        /// The default policy: at least 6 characters.
        public init() {}

        /// Identity Platform's enforcement states.
        public enum EnforcementState: String, Sendable, CaseIterable {
            case off = "OFF"
            case enforce = "ENFORCE"
        }
    }

    /// A (provider, email domain) pair whose IdP-asserted emails count as verified.
    public struct TrustedEmailDomain: Sendable, Equatable, Hashable {
        /// A federated provider id, e.g. `google.com` or `oidc.corp`.
        public var providerId: String
        /// A lowercase email domain, e.g. `example.com`.
        public var domain: String
        /// For `microsoft.com` (where they are required): the Entra directories (`tid`,
        /// lower case) whose tokens prove the domain's addresses; any other directory can
        /// put any address in its tokens. Empty for other providers.
        public var tenantIds: [String]

        /// Creates a pair.
        public init(providerId: String, domain: String, tenantIds: [String] = []) {
            self.providerId = providerId
            self.domain = domain
            self.tenantIds = tenantIds
        }
    }

    /// Algorithms a tenant may sign ID tokens with.
    public enum SigningAlgorithm: String, Sendable, CaseIterable {
        case rs256 = "RS256"
        case es256 = "ES256"
        case edDSA = "EdDSA"
    }
}
