public import Foundation
public import PortcullisJSON

/// An account, as the domain sees it. The password hash never leaves storage
/// and the crypto layer; nothing here renders it.
public struct User: Sendable, Equatable {
    /// The tenant, `nil` for project users.
    public var tenantId: String?
    /// The uid (`localId`), 1–128 characters.
    public var uid: String
    /// The email, in lower case (Firebase canonicalises emails so).
    public var email: String?
    /// Whether the email is verified.
    public var emailVerified: Bool
    /// Profile name.
    public var displayName: String?
    /// Profile picture URL.
    public var photoURL: String?
    /// Disabled users cannot sign in or refresh.
    public var disabled: Bool
    /// Custom claims as a JSON object (serialized ≤ 1000 bytes).
    public var customAttributes: [String: JSONValue]
    /// Whether a password is set (the hash itself stays in storage).
    public var hasPassword: Bool
    /// The linked sign-in providers (`providerUserInfo[]`), kept in their own table.
    public var providers: [ProviderLink]
    /// When the account was created.
    public var createdAt: Date
    /// Last sign-in: the start of the user's latest session, to the microsecond.
    public var lastLoginAt: Timestamp?
    /// When tokens were last issued (a sign-in or a refresh), to the minute for refreshes.
    public var lastRefreshAt: Date?
    /// When the password was last set (sign-up, change, reset, import; not a rehash).
    public var passwordUpdatedAt: Timestamp?
    /// Sessions that started strictly before this instant are revoked (``SessionPolicy``);
    /// the wire shows its whole second.
    public var validSince: Timestamp

    /// Creates a user value.
    public init(
        tenantId: String?, uid: String, email: String? = nil, emailVerified: Bool = false,
        displayName: String? = nil, photoURL: String? = nil, disabled: Bool = false,
        customAttributes: [String: JSONValue] = [:], hasPassword: Bool = false, providers: [ProviderLink] = [],
        createdAt: Date,
        lastLoginAt: Timestamp? = nil, lastRefreshAt: Date? = nil, passwordUpdatedAt: Timestamp? = nil,
        validSince: Timestamp = Timestamp(microseconds: 0)
    ) {
        self.tenantId = tenantId
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.disabled = disabled
        self.customAttributes = customAttributes
        self.hasPassword = hasPassword
        self.providers = providers
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
        self.lastRefreshAt = lastRefreshAt
        self.passwordUpdatedAt = passwordUpdatedAt
        self.validSince = validSince
    }

    /// Anonymous users have neither email nor a linked provider.
    public var isAnonymous: Bool { email == nil && providers.isEmpty }

    /// The ids of the linked providers, sorted (`createAuthUri`'s sign-in methods).
    public var providerIds: [String] { Array(Set(providers.map(\.providerId))).sorted() }

    /// The `password` link this account should have: one, under its email, exactly when it
    /// has both an email and a password.
    public var passwordLink: ProviderLink? {
        guard hasPassword, let email else { return nil }
        return ProviderLink(providerId: ProviderLink.password, federatedId: email, email: email)
    }

    /// Brings the `password` link in line with the email and password (after either changed).
    public mutating func syncPasswordLink() {
        providers.removeAll { $0.providerId == ProviderLink.password }
        if let passwordLink { providers.append(passwordLink) }
        providers.sort { ($0.providerId, $0.federatedId) < ($1.providerId, $1.federatedId) }
    }

    /// `firebase.identities` of the account's ID tokens: the email under `email`, and each
    /// federated provider's identifier under its provider id.
    public var identities: [String: [String]] {
        var identities: [String: [String]] = [:]
        if let email { identities["email"] = [email] }
        for link in providers where link.providerId != ProviderLink.password {
            identities[link.providerId, default: []].append(link.federatedId)
        }
        return identities
    }
}

/// A sign-in provider linked to an account: one entry of `providerUserInfo[]`.
public struct ProviderLink: Sendable, Equatable {
    /// The `password` provider's id.
    public static let password = "password"

    /// `password`, `google.com`, `oidc.<name>`, …
    public var providerId: String
    /// The account's identifier at the provider (for `password`, the email).
    public var federatedId: String
    /// The email the provider knows.
    public var email: String?
    /// The name the provider knows (federated providers; `password` shows the account's).
    public var displayName: String?
    /// The picture the provider knows.
    public var photoURL: String?

    /// Creates a link.
    public init(providerId: String, federatedId: String, email: String? = nil, displayName: String? = nil, photoURL: String? = nil) {
        self.providerId = providerId
        self.federatedId = federatedId
        self.email = email
        self.displayName = displayName
        self.photoURL = photoURL
    }
}
