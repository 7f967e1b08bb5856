// Provider configurations as Identity Platform's JSON: parsed leniently, written back in its
// field names, with Portcullis's additions (`clientIds`, `jwksUri`, `userInfoUri`, `revocationUri`).

extension IdentityProvider {
    /// The fields a configuration's body may carry. `responseType` is Identity Platform's
    /// choice of OIDC flow: the gateway exchanges ID tokens (and access tokens) only, so
    /// `{idToken: true}` is accepted and the authorization-code flow is refused by name.
    public static let schema = ResourceSchema.object([
        "name": .ignored, "displayName": .value, "enabled": .value, "clientId": .value, "clientSecret": .value,
        "clientIds": .value, "issuer": .value, "jwksUri": .value, "userInfoUri": .value, "revocationUri": .value,
        "responseType": .unsupported(
            "the authorization-code flow (responseType.code)", isInert: { ResourceSchema.isOff($0.value(at: ["code"])) }),
    ])

    /// Reads a configuration for `providerId` from a request or stored document.
    ///
    /// As in Identity Platform, `enabled` is off unless the body sets it. `clientId` is
    /// required; `issuer` too for `oidc.*` providers (built-in ones have theirs). URLs must
    /// be absolute `https` (or `http`, which the outbound network policy accepts only for
    /// the operator's allowed private networks).
    public init(providerId: String, json: JSONValue) throws(AuthError) {
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
        self.init(
            providerId: providerId, displayName: try body.string("displayName"), enabled: try body.bool("enabled") ?? false,
            clientId: clientId, clientIds: clientIds, issuer: try Self.url(body, "issuer"), jwksURI: try Self.url(body, "jwksUri"),
            userInfoURI: try Self.url(body, "userInfoUri"), clientSecret: try body.string("clientSecret"),
            revocationURI: try Self.url(body, "revocationUri"))
        if let displayName, displayName.count > 256 {
            throw AuthError(.invalidArgument, detail: "displayName must be at most 256 characters")
        }
        if Self.isOIDC(providerId), issuer == nil {
            throw AuthError(.invalidArgument, detail: "issuer is required for an OIDC provider")
        }
    }

    private static func url(_ body: JSONValue.Reader, _ key: String) throws(AuthError) -> String? {
        guard let text = try body.string(key), !text.isEmpty else { return nil }
        let lower = text.lowercased()
        guard text.utf8.count <= 2048, lower.hasPrefix("https://") || lower.hasPrefix("http://"),
            text.split(separator: "/", omittingEmptySubsequences: false).count >= 3,
            !text.split(separator: "/", omittingEmptySubsequences: false)[2].isEmpty
        else { throw AuthError(.invalidArgument, detail: "\(key) must be an absolute https URL") }
        return text
    }

    /// The resource's fields without `name` and without the client secret.
    public var json: JSONValue {
        var members = storedJSON
        members.setValue(nil, at: ["clientSecret"])
        return members
    }

    /// Every field, the client secret included: what a PATCH merges with (never rendered).
    public var storedJSON: JSONValue {
        var members: [String: JSONValue] = [
            "enabled": .bool(enabled), "clientId": .string(clientId), "clientIds": .array(clientIds.map(JSONValue.string)),
        ]
        if let displayName { members["displayName"] = .string(displayName) }
        if let issuer { members["issuer"] = .string(issuer) }
        if let jwksURI { members["jwksUri"] = .string(jwksURI) }
        if let userInfoURI { members["userInfoUri"] = .string(userInfoURI) }
        if let revocationURI { members["revocationUri"] = .string(revocationURI) }
        if let clientSecret { members["clientSecret"] = .string(clientSecret) }
        if Self.isOIDC(providerId) { members["responseType"] = .object(["idToken": .bool(true), "code": .bool(false)]) }
        return .object(members)
    }
}
