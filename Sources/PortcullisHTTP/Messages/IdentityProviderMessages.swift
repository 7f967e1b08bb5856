import Hummingbird
import PortcullisCore

/// A provider configuration as Identity Platform renders it: `name` plus its fields,
/// never the client secret.
///
/// Requests carry the same document, decoded as a ``JSONValue``: an update mask names
/// paths in it, so ``IdentityProvider`` reads it (one schema, in Core).
struct IdentityProviderResource: ResponseEncodable {
    let document: JSONValue

    init(name: String, provider: IdentityProvider) {
        var document = provider.json
        document.setValue(.string(name), at: ["name"])
        self.document = document
    }

    func encode(to encoder: any Encoder) throws { try document.encode(to: encoder) }
}

/// `GET …/defaultSupportedIdpConfigs`.
struct DefaultSupportedIdpConfigList: ResponseEncodable {
    let defaultSupportedIdpConfigs: [IdentityProviderResource]
}

/// `GET …/oauthIdpConfigs`.
struct OAuthIdpConfigList: ResponseEncodable {
    let oauthIdpConfigs: [IdentityProviderResource]
}
