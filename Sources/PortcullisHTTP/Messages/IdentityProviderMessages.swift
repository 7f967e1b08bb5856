import Hummingbird
import PortcullisCore

/// `GET …/defaultSupportedIdpConfigs`.
struct DefaultSupportedIdpConfigList: ResponseEncodable {
    let defaultSupportedIdpConfigs: [NamedResource]
}

/// `GET …/oauthIdpConfigs`.
struct OAuthIdpConfigList: ResponseEncodable {
    let oauthIdpConfigs: [NamedResource]
}
