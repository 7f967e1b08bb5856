public import PortcullisCore
public import PortcullisJSON

/// A tenant's or the project config's resource on the wire: Identity Platform's message, read
/// against its schema, its settings the `TenantSettings` document (Core's `Codable` form,
/// decoded leniently), PATCHed by update mask. The CLI's `tenants create|set` read their
/// `path=value` pairs through it too.
public enum TenantResource {
    /// The resource settings are read for: a tenant, or the project's config. Their Identity
    /// Platform messages differ only in fields the gateway does not implement.
    public enum Kind: Sendable {
        case tenant, project
    }

    /// The fields a tenant's or the project config's body may carry: the settings document's,
    /// the resource's `name`, and Identity Platform's fields for features the gateway
    /// lacks, accepted only while they ask for nothing (the Admin SDKs send
    /// `mfaConfig: {state: DISABLED}` and the like as a matter of course).
    static func schema(for kind: Kind) -> ResourceSchema {
        kind == .tenant ? tenantSchema : projectSchema
    }

    /// The settings a create request's body asks for (every switch off unless set).
    public static func settings(from body: JSONValue, kind: Kind) throws -> TenantSettings {
        try schema(for: kind).check(body)
        return try JSONValueDecoder().decode(TenantSettings.self, from: body)
    }

    /// The change a PATCH makes: the masked fields from `body`, or the whole resource when the
    /// mask is empty. The whole body is read first, as Google's front end does, so an unknown
    /// name or a wrong type outside the mask is still 400.
    public static func change(
        body: JSONValue, updateMask: String?, kind: Kind
    ) throws -> @Sendable (TenantSettings) throws -> TenantSettings {
        let schema = schema(for: kind)
        try schema.check(body)
        let mask = try FieldMask(parsing: updateMask, schema: schema)
        let patch = body.camelCasedKeys()
        _ = try JSONValueDecoder().decode(TenantSettings.self, from: patch)
        return { current in
            try JSONValueDecoder().decode(TenantSettings.self, from: mask.apply(patch, to: fields(current)))
        }
    }

    /// The settings as the resource's fields (no `name`).
    public static func fields(_ settings: TenantSettings) throws -> JSONValue {
        try JSONValueEncoder().encode(settings)
    }

    static let tenantSchema = ResourceSchema.object(
        commonFields.merging([
            "mfaConfig": multiFactorConfig,
            "testPhoneNumbers": .unsupported("phone sign-in (test phone numbers)", isInert: ResourceSchema.isOff),
        ]) { first, _ in first })

    static let projectSchema = ResourceSchema.object(
        commonFields.merging([
            "mfa": multiFactorConfig,
            "mobileLinksConfig": .unsupported(
                "a mobile link domain (email links open the gateway's action page)",
                isInert: { ResourceSchema.isOff($0.value(at: ["domain"])) }),
        ]) { first, _ in first })

    static let commonFields: [String: ResourceSchema] = [
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
        "emailDelivery": emailDeliverySchema,
        // Identity Platform's, for features the gateway does not have.
        "smsRegionConfig": .unsupported("phone sign-in (SMS region policy)", isInert: ResourceSchema.isOff),
        "recaptchaConfig": .unsupported("reCAPTCHA enforcement", isInert: recaptchaOff),
        "autodeleteAnonymousUsers": .unsupported("automatic deletion of anonymous users", isInert: ResourceSchema.isOff),
    ]

    /// `mfaConfig` (a tenant) or `mfa` (the project): off when its state and every provider's are.
    static let multiFactorConfig = ResourceSchema.unsupported("multi-factor authentication") { config in
        guard ResourceSchema.isOff(config.value(at: ["state"])) else { return false }
        guard case .array(let providers)? = config.value(at: ["providerConfigs"]) else { return true }
        return providers.allSatisfy { ResourceSchema.isOff($0.value(at: ["state"])) }
    }

    /// reCAPTCHA is off when every enforcement state is off and no `use…` protection is on;
    /// rules and keys then apply to nothing.
    static let recaptchaOff: @Sendable (JSONValue) -> Bool = { config in
        guard case .object(let members) = config else { return ResourceSchema.isOff(config) }
        return members.allSatisfy { name, value in
            !(name.hasSuffix("EnforcementState") || name.hasPrefix("use")) || ResourceSchema.isOff(value)
        }
    }

    /// The fields `emailDelivery` may carry: templates are keyed by the link's mode
    /// (`resetPassword`), localized ones by language tag first.
    static let emailDeliverySchema: ResourceSchema = {
        let templates = ResourceSchema.object(
            Dictionary(
                uniqueKeysWithValues: EmailActionKind.allCases.map {
                    ($0.mode, ResourceSchema.object(["subject": .value, "body": .value]))
                }))
        return .object([
            "channel": .value, "webhookUri": .value, "webhookSecretVersion": .value, "from": .value, "templates": templates,
            "localizedTemplates": .map(templates),
        ])
    }()
}
