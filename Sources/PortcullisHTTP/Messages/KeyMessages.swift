import Hummingbird
import PortcullisCore
import PortcullisJSON

/// An issuer's OpenID discovery document (the fields verifiers read).
struct OpenIDConfiguration: ResponseEncodable {
    let issuer: String
    let jwksURI: String
    var responseTypesSupported = ["id_token"]
    var subjectTypesSupported = ["public"]
    let idTokenSigningAlgValuesSupported: [String]

    private enum CodingKeys: String, CodingKey {
        case issuer, jwksURI = "jwks_uri", responseTypesSupported = "response_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
    }
}

/// The key a rotation made.
struct RotatedKeyResponse: ResponseEncodable {
    let kid: String
    let alg: String
}

/// One signing key, without its private part.
struct SigningKeyInfo: Encodable {
    let kid: String
    let alg: String
    /// `PENDING`, `ACTIVE` or `RETIRED`.
    let state: String
    let createTime: String
    /// A scheduled rotation's next key: when it starts signing.
    let activateTime: String?
}

/// A tenant's signing keys.
struct SigningKeyList: ResponseEncodable {
    let keys: [SigningKeyInfo]
}

/// A JWKS as the keyring holds it, served as it is.
struct JWKSDocument: ResponseEncodable {
    let document: JSONValue

    func encode(to encoder: any Encoder) throws { try document.encode(to: encoder) }
}

/// `/healthz` and `/readyz`.
struct HealthStatus: ResponseEncodable {
    var status = "ok"
}
