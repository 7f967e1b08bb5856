import PortcullisJSON

// The settings document, in Identity Platform's field names: what a tenant's or the project
// config's resource carries on the wire and what the database stores. Absent fields keep
// their defaults; a value out of its range is INVALID_ARGUMENT naming the field. How a
// document is read (snake_case keys, numbers as text) is the decoder's business.

extension TenantSettings: Codable {
    private enum Field: String, CodingKey {
        case displayName, allowPasswordSignup, enableEmailLinkSignin, disableAuth, enableAnonymousUser, client
        case emailPrivacyConfig, passwordPolicyConfig, signingAlgorithm, idTokenLifetimeSeconds
        case recentLoginWindowSeconds, refreshTokenReuseGraceSeconds, oobCodeLifetimeSeconds, trustedEmailDomains
        case scryptParameters, authorizedDomains, emailDelivery
    }

    private enum ClientField: String, CodingKey { case permissions }
    private enum PrivacyField: String, CodingKey { case enableImprovedEmailPrivacy }

    public init(from decoder: any Decoder) throws {
        self.init()
        let body = try decoder.container(keyedBy: Field.self)
        if let name = try body.decodeIfPresent(String.self, forKey: .displayName) {
            guard !name.isEmpty, name.count <= 256 else {
                throw AuthError(.invalidArgument, detail: "displayName must be 1 to 256 characters")
            }
            displayName = name
        }
        allowPasswordSignup = try body.decodeIfPresent(Bool.self, forKey: .allowPasswordSignup) ?? false
        enableEmailLinkSignin = try body.decodeIfPresent(Bool.self, forKey: .enableEmailLinkSignin) ?? false
        disableAuth = try body.decodeIfPresent(Bool.self, forKey: .disableAuth) ?? false
        enableAnonymousUser = try body.decodeIfPresent(Bool.self, forKey: .enableAnonymousUser) ?? false
        if let client = try body.nestedContainerIfPresent(keyedBy: ClientField.self, forKey: .client) {
            permissions = try client.decodeIfPresent(ClientPermissions.self, forKey: .permissions) ?? ClientPermissions()
        }
        if let privacy = try body.nestedContainerIfPresent(keyedBy: PrivacyField.self, forKey: .emailPrivacyConfig) {
            enableImprovedEmailPrivacy = try privacy.decodeIfPresent(Bool.self, forKey: .enableImprovedEmailPrivacy) ?? false
        }
        passwordPolicy = try body.decodeIfPresent(PasswordPolicy.self, forKey: .passwordPolicyConfig) ?? PasswordPolicy()
        if let algorithm = try body.decodeIfPresent(String.self, forKey: .signingAlgorithm) {
            guard let parsed = SigningAlgorithm(rawValue: algorithm) else {
                throw AuthError(.invalidArgument, detail: "signingAlgorithm must be one of RS256, ES256, EdDSA")
            }
            signingAlgorithm = parsed
        }
        idTokenLifetimeSeconds = try body.bounded(.idTokenLifetimeSeconds, 1...86_400) ?? 3600
        recentLoginWindowSeconds = try body.bounded(.recentLoginWindowSeconds, 1...86_400) ?? 300
        refreshTokenReuseGraceSeconds = try body.bounded(.refreshTokenReuseGraceSeconds, 0...300) ?? 10
        oobCodeLifetimeSeconds = try body.bounded(.oobCodeLifetimeSeconds, 1...604_800) ?? 3600
        trustedEmailDomains = try body.decodeIfPresent([TrustedEmailDomain].self, forKey: .trustedEmailDomains) ?? []
        scryptParameters = try body.decodeIfPresent(ScryptParameters.self, forKey: .scryptParameters)
        if let domains = try body.decodeIfPresent([String].self, forKey: .authorizedDomains) {
            authorizedDomains = try domains.enumerated().map { (index, domain) throws(AuthError) in
                guard !domain.isEmpty, domain.utf8.count <= 253,
                    domain.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" })
                else { throw AuthError(.invalidArgument, detail: "authorizedDomains[\(index)] must be a host name") }
                return domain.lowercased()
            }
        }
        emailDelivery = try body.decodeIfPresent(EmailDelivery.self, forKey: .emailDelivery)
    }

    /// Every field but `displayName`, `scryptParameters` and `emailDelivery` is written out,
    /// defaults included, so a reader sees the whole configuration.
    public func encode(to encoder: any Encoder) throws {
        var body = encoder.container(keyedBy: Field.self)
        try body.encodeIfPresent(displayName, forKey: .displayName)
        try body.encode(allowPasswordSignup, forKey: .allowPasswordSignup)
        try body.encode(enableEmailLinkSignin, forKey: .enableEmailLinkSignin)
        try body.encode(disableAuth, forKey: .disableAuth)
        try body.encode(enableAnonymousUser, forKey: .enableAnonymousUser)
        var client = body.nestedContainer(keyedBy: ClientField.self, forKey: .client)
        try client.encode(permissions, forKey: .permissions)
        var privacy = body.nestedContainer(keyedBy: PrivacyField.self, forKey: .emailPrivacyConfig)
        try privacy.encode(enableImprovedEmailPrivacy, forKey: .enableImprovedEmailPrivacy)
        try body.encode(passwordPolicy, forKey: .passwordPolicyConfig)
        try body.encode(signingAlgorithm.rawValue, forKey: .signingAlgorithm)
        try body.encode(idTokenLifetimeSeconds, forKey: .idTokenLifetimeSeconds)
        try body.encode(recentLoginWindowSeconds, forKey: .recentLoginWindowSeconds)
        try body.encode(refreshTokenReuseGraceSeconds, forKey: .refreshTokenReuseGraceSeconds)
        try body.encode(oobCodeLifetimeSeconds, forKey: .oobCodeLifetimeSeconds)
        try body.encode(trustedEmailDomains, forKey: .trustedEmailDomains)
        try body.encodeIfPresent(scryptParameters, forKey: .scryptParameters)
        try body.encode(authorizedDomains, forKey: .authorizedDomains)
        try body.encodeIfPresent(emailDelivery, forKey: .emailDelivery)
    }
}

extension TenantSettings.ClientPermissions: Codable {
    private enum Field: String, CodingKey { case disabledUserSignup, disabledUserDeletion }

    public init(from decoder: any Decoder) throws {
        let permissions = try decoder.container(keyedBy: Field.self)
        self.init(
            disabledUserSignup: try permissions.decodeIfPresent(Bool.self, forKey: .disabledUserSignup) ?? false,
            disabledUserDeletion: try permissions.decodeIfPresent(Bool.self, forKey: .disabledUserDeletion) ?? false)
    }

    public func encode(to encoder: any Encoder) throws {
        var permissions = encoder.container(keyedBy: Field.self)
        try permissions.encode(disabledUserSignup, forKey: .disabledUserSignup)
        try permissions.encode(disabledUserDeletion, forKey: .disabledUserDeletion)
    }
}

/// `passwordPolicyConfig`: one version of `customStrengthOptions`.
extension TenantSettings.PasswordPolicy: Codable {
    private enum Field: String, CodingKey { case passwordPolicyEnforcementState, forceUpgradeOnSignin, passwordPolicyVersions }
    private enum VersionField: String, CodingKey { case customStrengthOptions }
    private enum OptionField: String, CodingKey {
        case minPasswordLength, maxPasswordLength, containsLowercaseCharacter, containsUppercaseCharacter
        case containsNumericCharacter, containsNonAlphanumericCharacter
    }

    public init(from decoder: any Decoder) throws {
        self.init()
        let config = try decoder.container(keyedBy: Field.self)
        if let state = try config.decodeIfPresent(String.self, forKey: .passwordPolicyEnforcementState) {
            switch state {
            case "ENFORCE": enforcementState = .enforce
            case "OFF", "PASSWORD_POLICY_ENFORCEMENT_STATE_UNSPECIFIED": enforcementState = .off
            default:
                throw AuthError(
                    .invalidArgument, detail: "passwordPolicyConfig.passwordPolicyEnforcementState must be ENFORCE or OFF")
            }
        }
        forceUpgradeOnSignin = try config.decodeIfPresent(Bool.self, forKey: .forceUpgradeOnSignin) ?? false
        guard config.contains(.passwordPolicyVersions), try !config.decodeNil(forKey: .passwordPolicyVersions) else { return }
        var versions = try config.nestedUnkeyedContainer(forKey: .passwordPolicyVersions)
        guard !versions.isAtEnd else { return }
        guard versions.count == 1 else {
            throw AuthError(.invalidArgument, detail: "passwordPolicyConfig.passwordPolicyVersions takes one version")
        }
        let version = try versions.nestedContainer(keyedBy: VersionField.self)
        guard let options = try version.nestedContainerIfPresent(keyedBy: OptionField.self, forKey: .customStrengthOptions)
        else { return }
        minPasswordLength = try options.decodeIfPresent(Int.self, forKey: .minPasswordLength) ?? 6
        maxPasswordLength = try options.decodeIfPresent(Int.self, forKey: .maxPasswordLength) ?? 4096
        guard (6...30).contains(minPasswordLength) else {
            throw AuthError(.invalidArgument, detail: "minPasswordLength must be between 6 and 30")
        }
        guard (minPasswordLength...4096).contains(maxPasswordLength) else {
            throw AuthError(.invalidArgument, detail: "maxPasswordLength must be between minPasswordLength and 4096")
        }
        containsLowercaseCharacter = try options.decodeIfPresent(Bool.self, forKey: .containsLowercaseCharacter) ?? false
        containsUppercaseCharacter = try options.decodeIfPresent(Bool.self, forKey: .containsUppercaseCharacter) ?? false
        containsNumericCharacter = try options.decodeIfPresent(Bool.self, forKey: .containsNumericCharacter) ?? false
        containsNonAlphanumericCharacter =
            try options.decodeIfPresent(Bool.self, forKey: .containsNonAlphanumericCharacter) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var config = encoder.container(keyedBy: Field.self)
        try config.encode(enforcementState.rawValue, forKey: .passwordPolicyEnforcementState)
        try config.encode(forceUpgradeOnSignin, forKey: .forceUpgradeOnSignin)
        var versions = config.nestedUnkeyedContainer(forKey: .passwordPolicyVersions)
        var version = versions.nestedContainer(keyedBy: VersionField.self)
        var options = version.nestedContainer(keyedBy: OptionField.self, forKey: .customStrengthOptions)
        try options.encode(minPasswordLength, forKey: .minPasswordLength)
        try options.encode(maxPasswordLength, forKey: .maxPasswordLength)
        try options.encode(containsLowercaseCharacter, forKey: .containsLowercaseCharacter)
        try options.encode(containsUppercaseCharacter, forKey: .containsUppercaseCharacter)
        try options.encode(containsNumericCharacter, forKey: .containsNumericCharacter)
        try options.encode(containsNonAlphanumericCharacter, forKey: .containsNonAlphanumericCharacter)
    }
}

extension TenantSettings.TrustedEmailDomain: Codable {
    private enum Field: String, CodingKey { case providerId, domain, tenantIds }

    public init(from decoder: any Decoder) throws {
        let pair = try decoder.container(keyedBy: Field.self)
        let path = fieldPath(decoder.codingPath)
        guard let providerId = try pair.decodeIfPresent(String.self, forKey: .providerId),
            IdentityProvider.isFederated(providerId)
        else {
            throw AuthError(.invalidArgument, detail: "\(path).providerId must name a federated provider")
        }
        guard let domain = try pair.decodeIfPresent(String.self, forKey: .domain)?.lowercased(), !domain.isEmpty,
            !domain.contains("@"), domain.count <= 253
        else {
            throw AuthError(.invalidArgument, detail: "\(path).domain must be an email domain")
        }
        let directories = try pair.decodeIfPresent([String].self, forKey: .tenantIds) ?? []
        let tenantIds = try directories.enumerated().map { (index, id) throws(AuthError) in
            guard Self.isDirectoryId(id) else {
                throw AuthError(.invalidArgument, detail: "\(path).tenantIds[\(index)] must be an Entra directory id (a GUID)")
            }
            return id.lowercased()
        }
        // Any Entra directory can put any address in its tokens: Microsoft proves a domain only
        // from the directories that own it, which the tenant must name.
        if providerId == "microsoft.com", tenantIds.isEmpty {
            throw AuthError(
                .invalidArgument,
                detail: "\(path).tenantIds must list the Entra directories trusted for \(domain) (microsoft.com)")
        }
        if providerId != "microsoft.com", !tenantIds.isEmpty {
            throw AuthError(.invalidArgument, detail: "\(path).tenantIds applies to microsoft.com only")
        }
        self.init(providerId: providerId, domain: domain, tenantIds: tenantIds)
    }

    public func encode(to encoder: any Encoder) throws {
        var pair = encoder.container(keyedBy: Field.self)
        try pair.encode(providerId, forKey: .providerId)
        try pair.encode(domain, forKey: .domain)
        if !tenantIds.isEmpty { try pair.encode(tenantIds, forKey: .tenantIds) }
    }

    /// A GUID in its usual text form (8-4-4-4-12 hexadecimal digits), as Entra's `tid` is.
    static func isDirectoryId(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy { $0.isASCII && $0.isHexDigit } }
    }
}

extension KeyedDecodingContainer {
    /// The object under `key`, or `nil` when it is absent or `null`.
    func nestedContainerIfPresent<Nested: CodingKey>(
        keyedBy type: Nested.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<Nested>? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try nestedContainer(keyedBy: type, forKey: key)
    }

    /// An integer within `range`, or `nil` when absent.
    fileprivate func bounded(_ key: Key, _ range: ClosedRange<Int>) throws -> Int? {
        guard let value = try decodeIfPresent(Int.self, forKey: key) else { return nil }
        guard range.contains(value) else {
            throw AuthError(
                .invalidArgument,
                detail: "\(key.stringValue) must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }
}
