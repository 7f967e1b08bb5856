// Tenant settings as Identity Platform's JSON: parsed leniently, written back in its field names.

extension TenantSettings {
    /// The resource settings are read for: a tenant, or the project's config. Their Identity
    /// Platform messages differ only in fields the gateway does not implement.
    public enum Resource: Sendable {
        case tenant, project
    }

    /// The fields a tenant's or the project config's body may carry: what ``init(json:)``
    /// reads, the resource's `name`, and Identity Platform's fields for features the gateway
    /// lacks, accepted only while they ask for nothing (the Admin SDKs send
    /// `mfaConfig: {state: DISABLED}` and the like as a matter of course).
    public static func schema(for resource: Resource) -> ResourceSchema {
        resource == .tenant ? tenantSchema : projectSchema
    }

    private static let tenantSchema = ResourceSchema.object(
        commonFields.merging([
            "mfaConfig": multiFactorConfig,
            "testPhoneNumbers": .unsupported("phone sign-in (test phone numbers)", isInert: ResourceSchema.isOff),
        ]) { first, _ in first })

    private static let projectSchema = ResourceSchema.object(
        commonFields.merging([
            "mfa": multiFactorConfig,
            "mobileLinksConfig": .unsupported(
                "a mobile link domain (email links open the gateway's action page)",
                isInert: { ResourceSchema.isOff($0.value(at: ["domain"])) }),
        ]) { first, _ in first })

    private static let commonFields: [String: ResourceSchema] = [
        "name": .ignored,
        "displayName": .value, "allowPasswordSignup": .value, "enableEmailLinkSignin": .value, "disableAuth": .value,
        "enableAnonymousUser": .value,
        "client": .object(["permissions": .object(["disabledUserSignup": .value, "disabledUserDeletion": .value])]),
        "emailPrivacyConfig": .object(["enableImprovedEmailPrivacy": .value]),
        "passwordPolicyConfig": .object([
            "passwordPolicyEnforcementState": .value, "forceUpgradeOnSignin": .value, "lastUpdateTime": .ignored,
            "passwordPolicyVersions": .list(
                .object([
                    "schemaVersion": .ignored,
                    "customStrengthOptions": .object([
                        "minPasswordLength": .value, "maxPasswordLength": .value, "containsLowercaseCharacter": .value,
                        "containsUppercaseCharacter": .value, "containsNumericCharacter": .value,
                        "containsNonAlphanumericCharacter": .value,
                    ]),
                ])),
        ]),
        // Portcullis's own.
        "signingAlgorithm": .value, "idTokenLifetimeSeconds": .value, "recentLoginWindowSeconds": .value,
        "refreshTokenReuseGraceSeconds": .value, "oobCodeLifetimeSeconds": .value,
        "trustedEmailDomains": .list(.object(["providerId": .value, "domain": .value, "tenantIds": .value])),
        "scryptParameters": .object(["logN": .value, "r": .value, "p": .value]),
        "authorizedDomains": .value,
        "emailDelivery": EmailDelivery.schema,
        // Identity Platform's, for features the gateway does not have.
        "smsRegionConfig": .unsupported("phone sign-in (SMS region policy)", isInert: ResourceSchema.isOff),
        "recaptchaConfig": .unsupported("reCAPTCHA enforcement", isInert: recaptchaOff),
        "autodeleteAnonymousUsers": .unsupported("automatic deletion of anonymous users", isInert: ResourceSchema.isOff),
    ]

    /// `mfaConfig` (a tenant) or `mfa` (the project): off when its state and every provider's are.
    private static let multiFactorConfig = ResourceSchema.unsupported("multi-factor authentication") { config in
        guard ResourceSchema.isOff(config.value(at: ["state"])) else { return false }
        guard case .array(let providers)? = config.value(at: ["providerConfigs"]) else { return true }
        return providers.allSatisfy { ResourceSchema.isOff($0.value(at: ["state"])) }
    }

    /// reCAPTCHA is off when every enforcement state is off and no `use…` protection is on;
    /// rules and keys then apply to nothing.
    private static let recaptchaOff: @Sendable (JSONValue) -> Bool = { config in
        guard case .object(let members) = config else { return ResourceSchema.isOff(config) }
        return members.allSatisfy { name, value in
            !(name.hasSuffix("EnforcementState") || name.hasPrefix("use")) || ResourceSchema.isOff(value)
        }
    }

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
        if let domains = try body.array("authorizedDomains") {
            authorizedDomains = try domains.enumerated().map { (index, item) throws(AuthError) in
                guard case .string(let domain) = item, !domain.isEmpty, domain.utf8.count <= 253,
                    domain.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" })
                else { throw AuthError(.invalidArgument, detail: "authorizedDomains[\(index)] must be a host name") }
                return domain.lowercased()
            }
        }
        if let delivery = try body.object("emailDelivery") {
            emailDelivery = try EmailDelivery(reader: delivery)
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
                trustedEmailDomains.map { pair in
                    var members: [String: JSONValue] = ["providerId": .string(pair.providerId), "domain": .string(pair.domain)]
                    if !pair.tenantIds.isEmpty { members["tenantIds"] = .array(pair.tenantIds.map(JSONValue.string)) }
                    return .object(members)
                }),
        ]
        if let displayName { members["displayName"] = .string(displayName) }
        if let scryptParameters { members["scryptParameters"] = scryptParameters.json }
        members["authorizedDomains"] = .array(authorizedDomains.map(JSONValue.string))
        if let emailDelivery { members["emailDelivery"] = emailDelivery.json }
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
            IdentityProvider.isFederated(providerId)
        else {
            throw AuthError(.invalidArgument, detail: "\(reader.path).providerId must name a federated provider")
        }
        guard let domain = try reader.string("domain")?.lowercased(), !domain.isEmpty, !domain.contains("@"),
            domain.count <= 253
        else {
            throw AuthError(.invalidArgument, detail: "\(reader.path).domain must be an email domain")
        }
        let directories = try reader.array("tenantIds") ?? []
        let tenantIds = try directories.enumerated().map { (index, item) throws(AuthError) in
            guard case .string(let id) = item, Self.isDirectoryId(id) else {
                throw AuthError(.invalidArgument, detail: "\(reader.path).tenantIds[\(index)] must be an Entra directory id (a GUID)")
            }
            return id.lowercased()
        }
        // Any Entra directory can put any address in its tokens: Microsoft proves a domain only
        // from the directories that own it, which the tenant must name.
        if providerId == "microsoft.com", tenantIds.isEmpty {
            throw AuthError(
                .invalidArgument,
                detail: "\(reader.path).tenantIds must list the Entra directories trusted for \(domain) (microsoft.com)")
        }
        if providerId != "microsoft.com", !tenantIds.isEmpty {
            throw AuthError(.invalidArgument, detail: "\(reader.path).tenantIds applies to microsoft.com only")
        }
        self.init(providerId: providerId, domain: domain, tenantIds: tenantIds)
    }

    /// A GUID in its usual text form (8-4-4-4-12 hexadecimal digits), as Entra's `tid` is.
    static func isDirectoryId(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy { $0.isASCII && $0.isHexDigit } }
    }
}
