/// What a verified IdP credential says about the user.
public struct FederatedIdentity: Sendable, Equatable {
    /// `google.com`, `oidc.<name>`, …
    public var providerId: String
    /// The IdP's `sub` (user-info `id`/`sub` for access tokens).
    public var federatedId: String
    /// The email the IdP asserts, lower-cased.
    public var email: String?
    /// What the IdP claimed about the email (`email_verified`); `nil` when absent.
    public var emailVerifiedClaim: Bool?
    /// `name`.
    public var displayName: String?
    /// `picture`.
    public var photoURL: String?
    /// The verified claims object (or the user-info object).
    public var rawUserInfo: JSONValue

    /// Creates an identity.
    public init(
        providerId: String, federatedId: String, email: String? = nil, emailVerifiedClaim: Bool? = nil,
        displayName: String? = nil, photoURL: String? = nil, rawUserInfo: JSONValue = .object([:])
    ) {
        self.providerId = providerId
        self.federatedId = federatedId
        self.email = email
        self.emailVerifiedClaim = emailVerifiedClaim
        self.displayName = displayName
        self.photoURL = photoURL
        self.rawUserInfo = rawUserInfo
    }
}

/// The credential `signInWithIdp` exchanges: an IdP's ID token or access token.
public struct FederatedCredential: Sendable, Equatable {
    /// The provider the credential is from.
    public var providerId: String
    /// An OIDC ID token.
    public var idToken: String?
    /// An OAuth access token (resolved through the provider's user-info endpoint).
    public var accessToken: String?
    /// The nonce the client sent to the provider, if any.
    public var nonce: String?

    /// Creates a credential.
    public init(providerId: String, idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil) {
        self.providerId = providerId
        self.idToken = idToken
        self.accessToken = accessToken
        self.nonce = nonce
    }
}
