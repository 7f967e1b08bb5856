import PortcullisCore
import PortcullisJSON

/// A provider configuration on the wire: Identity Platform's `DefaultSupportedIdpConfig` and
/// `OAuthIdpConfig` messages, read leniently and written back in their field names, with
/// Portcullis's additions (`clientIds`, `jwksUri`, `userInfoUri`, `revocationUri`).
enum IdentityProviderResource {
    /// The fields a configuration's body may carry. `responseType` is Identity Platform's
    /// choice of OIDC flow: the gateway exchanges ID tokens (and access tokens) only, so
    /// `{idToken: true}` is accepted and the authorization-code flow is refused by name.
    static let schema = ResourceSchema.object([
        "name": .ignored, "displayName": .value, "enabled": .value, "clientId": .value, "clientSecret": .value,
        "clientIds": .value, "issuer": .value, "jwksUri": .value, "userInfoUri": .value, "revocationUri": .value,
        "responseType": .unsupported(
            "the authorization-code flow (responseType.code)", isInert: { ResourceSchema.isOff($0.value(at: ["code"])) }),
    ])

    /// Reads a configuration for `providerId` from a request body: a name the resource does
    /// not have is `INVALID_ARGUMENT`.
    static func provider(_ providerId: String, from body: JSONValue) throws -> IdentityProvider {
        try schema.check(body)
        return try provider(providerId, reading: body)
    }

    /// The change a PATCH makes: the masked fields from `body`, or the whole resource when the
    /// mask is empty (the client secret is kept unless the body or mask names it).
    static func change(
        body: JSONValue, updateMask: String?, providerId: String
    ) throws -> @Sendable (IdentityProvider) throws -> IdentityProvider {
        try schema.check(body)
        let mask = try FieldMask(parsing: updateMask, schema: schema)
        let patch = body.camelCasedKeys()
        return { current in
            var merged = mask.apply(patch, to: storedFields(current))
            if mask.isEmpty, patch.value(at: ["clientSecret"]) == nil, let secret = current.clientSecret {
                merged.setValue(.string(secret), at: ["clientSecret"])
            }
            return try provider(providerId, reading: merged)
        }
    }

    /// A configuration read from its fields.
    ///
    /// As in Identity Platform, `enabled` is off unless the body sets it. `clientId` is
    /// required; `issuer` too for `oidc.*` providers (built-in ones have theirs). URLs must
    /// be absolute `https` (or `http`, which the outbound network policy accepts only for
    /// the operator's allowed private networks).
    private static func provider(_ providerId: String, reading json: JSONValue) throws -> IdentityProvider {
        let body = try JSONValue.Reader(json.camelCasedKeys())
        guard let clientId = try body.string("clientId"), !clientId.isEmpty, clientId.utf8.count <= 1024 else {
            throw AuthError(.invalidArgument, detail: "clientId is required")
        }
        var clientIds: [String] = []
        for (index, item) in (try body.array("clientIds") ?? []).enumerated() {
            guard case .string(let audience) = item, !audience.isEmpty, audience.utf8.count <= 1024 else {
                throw AuthError(.invalidArgument, detail: "clientIds[\(index)] must be a non-empty string")
            }
            clientIds.append(audience)
        }
        guard clientIds.count <= 20 else { throw AuthError(.invalidArgument, detail: "clientIds takes at most 20 entries") }
        let provider = IdentityProvider(
            providerId: providerId, displayName: try body.string("displayName"), enabled: try body.bool("enabled") ?? false,
            clientId: clientId, clientIds: clientIds, issuer: try url(body, "issuer"), jwksURI: try url(body, "jwksUri"),
            userInfoURI: try url(body, "userInfoUri"), clientSecret: try body.string("clientSecret"),
            revocationURI: try url(body, "revocationUri"))
        if let displayName = provider.displayName, displayName.count > 256 {
            throw AuthError(.invalidArgument, detail: "displayName must be at most 256 characters")
        }
        if IdentityProvider.isOIDC(providerId), provider.issuer == nil {
            throw AuthError(.invalidArgument, detail: "issuer is required for an OIDC provider")
        }
        return provider
    }

    private static func url(_ body: JSONValue.Reader, _ key: String) throws -> String? {
        guard let text = try body.string(key), !text.isEmpty else { return nil }
        let lower = text.lowercased()
        guard text.utf8.count <= 2048, lower.hasPrefix("https://") || lower.hasPrefix("http://"),
            text.split(separator: "/", omittingEmptySubsequences: false).count >= 3,
            !text.split(separator: "/", omittingEmptySubsequences: false)[2].isEmpty
        else { throw AuthError(.invalidArgument, detail: "\(key) must be an absolute https URL") }
        return text
    }

    /// The resource's fields without `name` and without the client secret.
    static func fields(_ provider: IdentityProvider) -> JSONValue {
        var members = storedFields(provider)
        members.setValue(nil, at: ["clientSecret"])
        return members
    }

    /// Every field, the client secret included: what a PATCH merges with (never rendered).
    static func storedFields(_ provider: IdentityProvider) -> JSONValue {
        var members: [String: JSONValue] = [
            "enabled": .bool(provider.enabled), "clientId": .string(provider.clientId),
            "clientIds": .array(provider.clientIds.map(JSONValue.string)),
        ]
        if let displayName = provider.displayName { members["displayName"] = .string(displayName) }
        if let issuer = provider.issuer { members["issuer"] = .string(issuer) }
        if let jwksURI = provider.jwksURI { members["jwksUri"] = .string(jwksURI) }
        if let userInfoURI = provider.userInfoURI { members["userInfoUri"] = .string(userInfoURI) }
        if let revocationURI = provider.revocationURI { members["revocationUri"] = .string(revocationURI) }
        if let clientSecret = provider.clientSecret { members["clientSecret"] = .string(clientSecret) }
        if IdentityProvider.isOIDC(provider.providerId) {
            members["responseType"] = .object(["idToken": .bool(true), "code": .bool(false)])
        }
        return .object(members)
    }
}
