public import PortcullisJSON

/// What a verified identity-provider credential says about the user: the input of
/// federated sign-in and linking, read from an ID token's claims or the provider's
/// user-info answer to an access token.
///
/// Nothing here is trusted beyond what the provider asserted: whether ``email`` counts as
/// verified is the trust policy's decision (DESIGN.md §1), made from ``providerId``, the
/// address's domain and ``emailVerifiedClaim``.
public struct FederatedIdentity: Sendable, Equatable {
    /// The provider that vouched for the user (`google.com`, `oidc.acme`, …).
    public var providerId: String
    /// The provider's id of the user: an ID token's `sub`, or user-info's `sub`/`id`.
    public var federatedId: String
    /// The email the provider gave, lower-cased; `nil` when it gave none.
    public var email: String?
    /// What the provider claimed in `email_verified` (`true`/`false` or the strings
    /// `"true"`/`"false"`, as some providers send); `nil` when it said nothing.
    public var emailVerifiedClaim: Bool?
    /// The provider's `name`.
    public var displayName: String?
    /// The provider's `picture` (or user-info's `avatar_url`, or Facebook's `picture.data.url`).
    public var photoURL: String?
    /// The verified claims object (or the user-info object), as Identity Toolkit's `rawUserInfo`.
    public var rawUserInfo: JSONValue
    /// Whether the identity was resolved from an access token (user-info) rather than an ID
    /// token: such a token may have been issued to any app, so its email proves nothing.
    public var fromAccessToken: Bool

    /// An identity.
    public init(
        providerId: String, federatedId: String, email: String? = nil, emailVerifiedClaim: Bool? = nil,
        displayName: String? = nil, photoURL: String? = nil, rawUserInfo: JSONValue = .object([:]),
        fromAccessToken: Bool = false
    ) {
        self.providerId = providerId
        self.federatedId = federatedId
        self.email = email
        self.emailVerifiedClaim = emailVerifiedClaim
        self.displayName = displayName
        self.photoURL = photoURL
        self.rawUserInfo = rawUserInfo
        self.fromAccessToken = fromAccessToken
    }
}

/// A federated identity as the admin API names one (`accounts:lookup`'s `federatedUserId[]`).
public struct FederatedUserId: Sendable, Hashable {
    /// `google.com`, `oidc.<name>`, …
    public var providerId: String
    /// The account's id at the provider.
    public var rawId: String

    /// An identity.
    public init(providerId: String, rawId: String) {
        self.providerId = providerId
        self.rawId = rawId
    }
}
