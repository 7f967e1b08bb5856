public import Foundation

/// What the gateway knows of a user, as of the last sign-in, update or
/// ``User/reload()``.
public struct UserProfile: Codable, Sendable, Equatable {
    /// The uid.
    public var uid: String
    /// The email, in lower case, if the user has one.
    public var email: String?
    /// Whether the email is verified (by the verification flow, an administrator, or a
    /// trusted identity provider).
    public var emailVerified: Bool
    /// The display name.
    public var displayName: String?
    /// The photo URL.
    public var photoURL: String?
    /// The tenant, or `nil` for a project user.
    public var tenantId: String?
    /// The ways in: one entry per linked provider (`password`, `google.com`, …).
    public var providerData: [ProviderInfo]
    /// When the account was created.
    public var creationDate: Date?
    /// When the user last signed in.
    public var lastSignInDate: Date?

    /// Whether the user signed in anonymously and has linked no provider since.
    public var isAnonymous: Bool

    /// A profile.
    public init(
        uid: String, email: String? = nil, emailVerified: Bool = false, displayName: String? = nil, photoURL: String? = nil,
        tenantId: String? = nil, providerData: [ProviderInfo] = [], isAnonymous: Bool = false, creationDate: Date? = nil,
        lastSignInDate: Date? = nil
    ) {
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.tenantId = tenantId
        self.providerData = providerData
        self.isAnonymous = isAnonymous
        self.creationDate = creationDate
        self.lastSignInDate = lastSignInDate
    }
}

/// One provider linked to a user.
public struct ProviderInfo: Codable, Sendable, Equatable {
    /// `password`, `google.com`, `oidc.<name>`, …
    public var providerId: String
    /// The user's id at that provider (the email for `password`).
    public var uid: String
    /// The email the provider gave.
    public var email: String?
    /// The name the provider gave.
    public var displayName: String?
    /// The photo the provider gave.
    public var photoURL: String?

    /// A provider link.
    public init(providerId: String, uid: String, email: String? = nil, displayName: String? = nil, photoURL: String? = nil) {
        self.providerId = providerId
        self.uid = uid
        self.email = email
        self.displayName = displayName
        self.photoURL = photoURL
    }
}
