/// What a client presents to `signInWithIdp` (its `postBody`): an identity provider's OIDC
/// ID token, an OAuth access token, or both, and the nonce the client generated.
public struct FederatedCredential: Sendable, Equatable {
    /// The provider the credential claims to come from (`providerId=` in `postBody`).
    public var providerId: String
    /// The provider's OIDC ID token (`id_token=`), verified against the provider's JWKS.
    public var idToken: String?
    /// An OAuth access token (`access_token=`), resolved at the provider's user-info endpoint.
    public var accessToken: String?
    /// The raw nonce the client sent (`nonce=`); the ID token must carry its SHA-256 (hex).
    public var nonce: String?

    /// A credential.
    public init(providerId: String, idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil) {
        self.providerId = providerId
        self.idToken = idToken
        self.accessToken = accessToken
        self.nonce = nonce
    }
}
