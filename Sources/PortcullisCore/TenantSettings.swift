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

        /// Creates a pair.
        public init(providerId: String, domain: String) {
            self.providerId = providerId
            self.domain = domain
        }
    }

    /// Algorithms a tenant may sign ID tokens with.
    public enum SigningAlgorithm: String, Sendable, CaseIterable {
        case rs256 = "RS256"
        case es256 = "ES256"
        case edDSA = "EdDSA"
    }
}

// MARK: - JSON representation

extension TenantSettings {
    /// Every field path an `updateMask` may name: leaves and the objects that hold them.
    public static let maskablePaths: Set<String> = [
        "displayName", "allowPasswordSignup", "enableEmailLinkSignin", "disableAuth", "enableAnonymousUser",
        "client", "client.permissions", "client.permissions.disabledUserSignup",
        "client.permissions.disabledUserDeletion",
        "emailPrivacyConfig", "emailPrivacyConfig.enableImprovedEmailPrivacy",
        "passwordPolicyConfig", "passwordPolicyConfig.passwordPolicyEnforcementState",
        "passwordPolicyConfig.forceUpgradeOnSignin", "passwordPolicyConfig.passwordPolicyVersions",
        "signingAlgorithm", "idTokenLifetimeSeconds", "recentLoginWindowSeconds",
        "refreshTokenReuseGraceSeconds", "oobCodeLifetimeSeconds", "trustedEmailDomains",
        "scryptParameters", "scryptParameters.logN", "scryptParameters.r", "scryptParameters.p",
    ]

    static let federatedProviders: Set<String> = [
        "google.com", "apple.com", "microsoft.com", "yahoo.com", "facebook.com", "github.com", "twitter.com",
    ]

    /// Reads settings from a request or stored document; absent fields keep their defaults.
    ///
    /// Keys may be camelCase or snake_case; wrong types and out-of-range values
    /// are `INVALID_ARGUMENT` naming the field.
    public init(json: JSONValue) throws(AuthError) {
        self.init()
        let body = try JSONValue.Reader(json.camelCasedKeys())
        if let name = try body.string("displayName") {
            guard !name.isEmpty, name.count <= 256 else {
                throw AuthError(.invalidArgument, detail: "displayName must be 1 to 256 characters")
            }
            displayName = name
        }
        allowPasswordSignup = try body.bool("allowPasswordSignup") ?? false
        enableEmailLinkSignin = try body.bool("enableEmailLinkSignin") ?? false
        disableAuth = try body.bool("disableAuth") ?? false
        enableAnonymousUser = try body.bool("enableAnonymousUser") ?? false
        if let permissions = try body.object("client")?.object("permissions") {
            self.permissions.disabledUserSignup = try permissions.bool("disabledUserSignup") ?? false
            self.permissions.disabledUserDeletion = try permissions.bool("disabledUserDeletion") ?? false
        }
        if let privacy = try body.object("emailPrivacyConfig") {
            enableImprovedEmailPrivacy = try privacy.bool("enableImprovedEmailPrivacy") ?? false
        }
        if let policy = try body.object("passwordPolicyConfig") {
            passwordPolicy = try PasswordPolicy(reader: policy)
        }
        if let algorithm = try body.string("signingAlgorithm") {
            guard let parsed = SigningAlgorithm(rawValue: algorithm) else {
                throw AuthError(.invalidArgument, detail: "signingAlgorithm must be one of RS256, ES256, EdDSA")
            }
            signingAlgorithm = parsed
        }
        idTokenLifetimeSeconds = try Self.bounded(body, "idTokenLifetimeSeconds", 1...86_400) ?? 3600
        recentLoginWindowSeconds = try Self.bounded(body, "recentLoginWindowSeconds", 1...86_400) ?? 300
        refreshTokenReuseGraceSeconds = try Self.bounded(body, "refreshTokenReuseGraceSeconds", 0...300) ?? 10
        oobCodeLifetimeSeconds = try Self.bounded(body, "oobCodeLifetimeSeconds", 1...604_800) ?? 3600
        if let domains = try body.array("trustedEmailDomains") {
            trustedEmailDomains = try domains.enumerated().map { (index, item) throws(AuthError) in
                try TrustedEmailDomain(reader: JSONValue.Reader(item, path: "trustedEmailDomains[\(index)]"))
            }
        }
        if let scrypt = try body.object("scryptParameters") {
            scryptParameters = try ScryptParameters(reader: scrypt)
        }
    }

    private static func bounded(
        _ body: JSONValue.Reader, _ key: String, _ range: ClosedRange<Int>
    ) throws(AuthError) -> Int? {
        guard let value = try body.int(key) else { return nil }
        guard range.contains(value) else {
            throw AuthError(
                .invalidArgument, detail: "\(key) must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// The settings as Identity Platform's JSON fields (no `name`).
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "allowPasswordSignup": .bool(allowPasswordSignup),
            "enableEmailLinkSignin": .bool(enableEmailLinkSignin),
            "disableAuth": .bool(disableAuth),
            "enableAnonymousUser": .bool(enableAnonymousUser),
            "client": .object([
                "permissions": .object([
                    "disabledUserSignup": .bool(permissions.disabledUserSignup),
                    "disabledUserDeletion": .bool(permissions.disabledUserDeletion),
                ])
            ]),
            "emailPrivacyConfig": .object(["enableImprovedEmailPrivacy": .bool(enableImprovedEmailPrivacy)]),
            "passwordPolicyConfig": passwordPolicy.json,
            "signingAlgorithm": .string(signingAlgorithm.rawValue),
            "idTokenLifetimeSeconds": .integer(Int64(idTokenLifetimeSeconds)),
            "recentLoginWindowSeconds": .integer(Int64(recentLoginWindowSeconds)),
            "refreshTokenReuseGraceSeconds": .integer(Int64(refreshTokenReuseGraceSeconds)),
            "oobCodeLifetimeSeconds": .integer(Int64(oobCodeLifetimeSeconds)),
            "trustedEmailDomains": .array(
                trustedEmailDomains.map {
                    .object(["providerId": .string($0.providerId), "domain": .string($0.domain)])
                }),
        ]
        if let displayName { members["displayName"] = .string(displayName) }
        if let scryptParameters { members["scryptParameters"] = scryptParameters.json }
        return .object(members)
    }
}

extension TenantSettings.PasswordPolicy {
    init(reader: JSONValue.Reader) throws(AuthError) {
        self.init()
        if let state = try reader.string("passwordPolicyEnforcementState") {
            switch state {
            case "ENFORCE": enforcementState = .enforce
            case "OFF", "PASSWORD_POLICY_ENFORCEMENT_STATE_UNSPECIFIED": enforcementState = .off
            default:
                throw AuthError(
                    .invalidArgument, detail: "passwordPolicyConfig.passwordPolicyEnforcementState must be ENFORCE or OFF")
            }
        }
        forceUpgradeOnSignin = try reader.bool("forceUpgradeOnSignin") ?? false
        guard let versions = try reader.array("passwordPolicyVersions"), let first = versions.first else { return }
        guard versions.count == 1 else {
            throw AuthError(.invalidArgument, detail: "passwordPolicyConfig.passwordPolicyVersions takes one version")
        }
        let version = try JSONValue.Reader(first, path: "passwordPolicyConfig.passwordPolicyVersions[0]")
        guard let options = try version.object("customStrengthOptions") else { return }
        minPasswordLength = try options.int("minPasswordLength") ?? 6
        maxPasswordLength = try options.int("maxPasswordLength") ?? 4096
        guard (6...30).contains(minPasswordLength) else {
            throw AuthError(.invalidArgument, detail: "minPasswordLength must be between 6 and 30")
        }
        guard (minPasswordLength...4096).contains(maxPasswordLength) else {
            throw AuthError(.invalidArgument, detail: "maxPasswordLength must be between minPasswordLength and 4096")
        }
        containsLowercaseCharacter = try options.bool("containsLowercaseCharacter") ?? false
        containsUppercaseCharacter = try options.bool("containsUppercaseCharacter") ?? false
        containsNumericCharacter = try options.bool("containsNumericCharacter") ?? false
        containsNonAlphanumericCharacter = try options.bool("containsNonAlphanumericCharacter") ?? false
    }

    var json: JSONValue {
        .object([
            "passwordPolicyEnforcementState": .string(enforcementState.rawValue),
            "forceUpgradeOnSignin": .bool(forceUpgradeOnSignin),
            "passwordPolicyVersions": .array([
                .object([
                    "customStrengthOptions": .object([
                        "minPasswordLength": .integer(Int64(minPasswordLength)),
                        "maxPasswordLength": .integer(Int64(maxPasswordLength)),
                        "containsLowercaseCharacter": .bool(containsLowercaseCharacter),
                        "containsUppercaseCharacter": .bool(containsUppercaseCharacter),
                        "containsNumericCharacter": .bool(containsNumericCharacter),
                        "containsNonAlphanumericCharacter": .bool(containsNonAlphanumericCharacter),
                    ])
                ])
            ]),
        ])
    }
}

extension TenantSettings.TrustedEmailDomain {
    init(reader: JSONValue.Reader) throws(AuthError) {
        guard let providerId = try reader.string("providerId"),
            TenantSettings.federatedProviders.contains(providerId) || providerId.hasPrefix("oidc.")
        else {
            throw AuthError(.invalidArgument, detail: "\(reader.path).providerId must name a federated provider")
        }
        guard let domain = try reader.string("domain")?.lowercased(), !domain.isEmpty, !domain.contains("@"),
            domain.count <= 253
        else {
            throw AuthError(.invalidArgument, detail: "\(reader.path).domain must be an email domain")
        }
        self.init(providerId: providerId, domain: domain)
    }
}

/// scrypt's cost parameters: N = 2^`logN`, block size `r`, parallelism `p`.
public struct ScryptParameters: Sendable, Hashable {
    /// log2 of N.
    public var logN: Int
    /// Block size.
    public var r: Int
    /// Parallelism.
    public var p: Int

    /// N = 2^14, r = 8, p = 1 (DESIGN.md §3's default): 16 MiB and ~40 ms per hash here.
    public static let standard = ScryptParameters(logN: 14, r: 8, p: 1)

    /// The most memory one hash may take when a tenant chooses (128 · r · N bytes): 64 MiB,
    /// so a hashing thread per core stays within a small daemon's budget.
    public static let maximumMemoryBytes = 64 << 20

    /// The most work one hash may take when a tenant chooses (N · r · p): 16 × the default's.
    /// The hashing pool is shared by every tenant, so a tenant's cost is everyone's latency;
    /// the memory bound alone would let p = 16 make a hash 64 × the default's work.
    public static let maximumWork = 16 * (1 << standard.logN) * standard.r * standard.p

    /// N · r · p.
    public var work: Int { (1 << logN) * r * p }

    /// Creates parameters.
    public init(logN: Int, r: Int, p: Int) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    init(reader: JSONValue.Reader) throws(AuthError) {
        let defaults = Self.standard
        self.init(
            logN: try reader.int("logN") ?? defaults.logN, r: try reader.int("r") ?? defaults.r,
            p: try reader.int("p") ?? defaults.p)
        guard (10...20).contains(logN), (1...32).contains(r), (1...16).contains(p),
            128 * r << logN <= Self.maximumMemoryBytes, work <= Self.maximumWork
        else {
            throw AuthError(
                .invalidArgument,
                detail: "scryptParameters: logN 10 to 20, r 1 to 32, p 1 to 16, at most 64 MiB (128 * r * 2^logN) "
                    + "and at most 16 times the default's work (2^logN * r * p <= \(Self.maximumWork))")
        }
    }

    var json: JSONValue {
        .object(["logN": .integer(Int64(logN)), "r": .integer(Int64(r)), "p": .integer(Int64(p))])
    }
}
