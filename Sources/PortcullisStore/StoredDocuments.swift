import PortcullisCore
import PortcullisJSON

// The JSON documents Store writes: the settings column, and what audit entries show of a
// change. The settings document is `TenantSettings`'s `Codable` form (Identity Platform's
// field names), so rows written before this module had its own reader read back unchanged.

extension TenantSettings {
    /// The settings as the `settings` column stores them and audit entries show them.
    var document: JSONValue {
        get throws { try JSONValueEncoder().encode(self) }
    }

    /// Settings read back from their stored document.
    init(document text: String) throws {
        self = try JSONValueDecoder().decode(TenantSettings.self, from: JSONValue.parse(Array(text.utf8)))
    }
}

extension IdentityProvider {
    /// What an audit entry shows of a configuration: every field but the client secret.
    var auditDocument: JSONValue {
        var members: [String: JSONValue] = [
            "providerId": .string(providerId), "enabled": .bool(enabled), "clientId": .string(clientId),
            "clientIds": .array(clientIds.map(JSONValue.string)),
        ]
        if let displayName { members["displayName"] = .string(displayName) }
        if let issuer { members["issuer"] = .string(issuer) }
        if let jwksURI { members["jwksUri"] = .string(jwksURI) }
        if let userInfoURI { members["userInfoUri"] = .string(userInfoURI) }
        if let revocationURI { members["revocationUri"] = .string(revocationURI) }
        return .object(members)
    }
}
