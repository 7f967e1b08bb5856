public import Foundation

/// An account, as the domain sees it. The password hash never leaves storage
/// and the crypto layer; nothing here renders it.
public struct User: Sendable, Equatable {
    /// The tenant, `nil` for project users.
    public var tenantId: String?
    /// The uid (`localId`), 1–128 characters.
    public var uid: String
    /// The email, as entered (matched case-insensitively).
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
    /// Last sign-in.
    public var lastLoginAt: Date?
    /// Last token refresh.
    public var lastRefreshAt: Date?
    /// Tokens issued (by `auth_time` or refresh-token issue time) strictly before this unix second are revoked.
    public var validSince: Int64

    /// Creates a user value.
    public init(
        tenantId: String?, uid: String, email: String? = nil, emailVerified: Bool = false,
        displayName: String? = nil, photoURL: String? = nil, disabled: Bool = false,
        customAttributes: [String: JSONValue] = [:], hasPassword: Bool = false, providers: [ProviderLink] = [],
        createdAt: Date,
        lastLoginAt: Date? = nil, lastRefreshAt: Date? = nil, validSince: Int64 = 0
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

/// Email address rules (RFC 5322 is far looser; this is what Firebase accepts in practice).
public enum EmailAddress {
    /// `INVALID_EMAIL` unless `text` looks like `local@domain.tld`; returns it trimmed.
    public static func validate(_ text: String) throws(AuthError) -> String {
        let email = text.trimmingCharacters(in: .whitespaces)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, email.utf8.count <= 254,
            let domain = parts.last, domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."),
            !email.contains(where: { $0.isWhitespace || $0 == "\u{0}" || $0 == "," || $0 == ";" })
        else { throw AuthError(.invalidEmail) }
        return email
    }
}

extension TenantSettings.PasswordPolicy {
    /// `WEAK_PASSWORD : Password should be at least N characters` below the minimum
    /// (6 unless an enforced policy says more); with `ENFORCE`, any other unmet
    /// requirement is `PASSWORD_DOES_NOT_MEET_REQUIREMENTS`.
    public func check(_ password: String) throws(AuthError) {
        let minimum = enforcementState == .enforce ? minPasswordLength : 6
        guard password.count >= minimum else {
            throw AuthError(.weakPassword, detail: "Password should be at least \(minimum) characters")
        }
        guard enforcementState == .enforce else { return }
        var missing: [String] = []
        if password.count > maxPasswordLength { missing.append("Password may contain at most \(maxPasswordLength) characters") }
        if containsLowercaseCharacter, !password.contains(where: \.isLowercase) { missing.append("Password must contain a lower case character") }
        if containsUppercaseCharacter, !password.contains(where: \.isUppercase) { missing.append("Password must contain an upper case character") }
        if containsNumericCharacter, !password.contains(where: \.isNumber) { missing.append("Password must contain a numeric character") }
        if containsNonAlphanumericCharacter, !password.contains(where: { !$0.isLetter && !$0.isNumber }) {
            missing.append("Password must contain a non-alphanumeric character")
        }
        guard missing.isEmpty else {
            throw AuthError(.passwordDoesNotMeetRequirements, detail: "Missing password requirements: [\(missing.joined(separator: ", "))]")
        }
    }
}
