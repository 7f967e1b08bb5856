import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON

/// Identity Toolkit's user resource (`accounts:lookup`'s `users[]`), with Google's types:
/// int64 values as strings, `passwordUpdatedAt` a number, `lastRefreshAt` RFC 3339, absent
/// values left out. Never the password hash: an account with a password shows Google's
/// placeholder, which clients read to know it has one.
struct UserInfo: Encodable {
    /// `passwordHash` as Google shows it to everyone but an export: base64 of "REDACTED".
    static let redactedPasswordHash = "UkVEQUNURUQ="

    /// One linked way in (`providerUserInfo[]`).
    struct ProviderInfo: Encodable {
        let providerId: String
        let federatedId: String
        let rawId: String
        let email: String?
        let displayName: String?
        let photoUrl: String?

        /// The links of `user`; the password provider shows the account's own profile, as Firebase does.
        static func list(of user: User) -> [ProviderInfo] {
            user.providers.map { link in
                let isPassword = link.providerId == ProviderLink.password
                return ProviderInfo(
                    providerId: link.providerId, federatedId: link.federatedId, rawId: link.federatedId, email: link.email,
                    displayName: isPassword ? user.displayName : link.displayName,
                    photoUrl: isPassword ? user.photoURL : link.photoURL)
            }
        }
    }

    let localId: String
    let email: String?
    let emailVerified: Bool
    let displayName: String?
    let photoUrl: String?
    let disabled: Bool
    let tenantId: String?
    /// The placeholder, for an account with a password.
    let passwordHash: String?
    /// Milliseconds, as a number.
    let passwordUpdatedAt: Int64?
    /// Seconds, as a string.
    let validSince: String
    /// Milliseconds, as a string.
    let createdAt: String
    /// Milliseconds, as a string.
    let lastLoginAt: String?
    /// RFC 3339.
    let lastRefreshAt: String?
    /// The custom claims as a JSON string, as Identity Toolkit carries them.
    let customAttributes: String?
    let providerUserInfo: [ProviderInfo]

    init(_ user: User) {
        localId = user.uid
        email = user.email
        emailVerified = user.emailVerified
        displayName = user.displayName
        photoUrl = user.photoURL
        disabled = user.disabled
        tenantId = user.tenantId
        passwordHash = user.hasPassword ? Self.redactedPasswordHash : nil
        passwordUpdatedAt = user.hasPassword ? user.passwordUpdatedAt?.milliseconds : nil
        validSince = String(user.validSince.seconds)
        createdAt = String(Int64(user.createdAt.timeIntervalSince1970 * 1000))
        lastLoginAt = user.lastLoginAt.map { String($0.milliseconds) }
        lastRefreshAt = user.lastRefreshAt.map(RFC3339.format)
        customAttributes = user.customAttributes.isEmpty ? nil : JSONValue.object(user.customAttributes).serialized()
        providerUserInfo = ProviderInfo.list(of: user)
    }
}

/// `accounts:update`'s answer (Identity Toolkit's `SetAccountInfoResponse`): the fields
/// Google's carries and no others — also when it applies an `oobCode` — with fresh tokens
/// when the change issued them.
struct SetAccountInfoResponse: ResponseEncodable {
    var kind = "identitytoolkit#SetAccountInfoResponse"
    let localId: String
    let email: String?
    let displayName: String?
    let photoUrl: String?
    let providerUserInfo: [UserInfo.ProviderInfo]
    /// The placeholder, for an account with a password.
    let passwordHash: String?
    let emailVerified: Bool
    /// The address an applied email change moved to.
    let newEmail: String?
    let idToken: String?
    let refreshToken: String?
    /// Seconds, as a string.
    let expiresIn: String?

    init(_ user: User, tokens: SessionTokens? = nil, newEmail: String? = nil) {
        localId = user.uid
        email = user.email
        displayName = user.displayName
        photoUrl = user.photoURL
        providerUserInfo = UserInfo.ProviderInfo.list(of: user)
        passwordHash = user.hasPassword ? UserInfo.redactedPasswordHash : nil
        emailVerified = user.emailVerified
        self.newEmail = newEmail
        let fields = tokens.map(TokenFields.init)
        idToken = fields?.idToken
        refreshToken = fields?.refreshToken
        expiresIn = fields?.expiresIn
    }
}

/// A user resource under an answer's `kind`, with fresh tokens when the change issued them
/// (`accounts:update`, the Admin API's `accounts`).
struct UserAnswer: ResponseEncodable {
    let kind: String
    let user: UserInfo
    let tokens: TokenFields?

    private enum CodingKeys: String, CodingKey { case kind }

    func encode(to encoder: any Encoder) throws {
        // One flat object, as Identity Toolkit answers: the user's fields, `kind`, the tokens.
        try user.encode(to: encoder)
        try tokens?.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
    }
}

/// The token fields every sign-in answer carries.
struct TokenFields: Encodable {
    let idToken: String
    let refreshToken: String
    /// Seconds, as a string.
    let expiresIn: String

    init(_ tokens: SessionTokens) {
        idToken = tokens.idToken
        refreshToken = tokens.refreshToken
        expiresIn = String(tokens.expiresIn)
    }
}
