import Foundation

/// The answers of the gateway's end-user API this SDK reads; fields it does not need are
/// ignored, and numbers that Identity Toolkit sends as strings are read either way.

/// Every sign-in answer (`signUp`, `signInWithPassword`, `signInWithCustomToken`,
/// `signInWithIdp`), and `accounts:update` when it issues fresh tokens.
struct SignInResponse: Decodable {
    var localId: String?
    var idToken: String?
    var refreshToken: String?
    var expiresIn: LenientInt?
    var email: String?
    var displayName: String?
    var photoUrl: String?
    var isNewUser: Bool?
    var needConfirmation: Bool?
    var providerId: String?
    var federatedId: String?
    var rawUserInfo: String?
}

/// `POST /v1/token`'s answer.
struct TokenResponse: Decodable {
    var idToken: String
    var refreshToken: String
    var expiresIn: LenientInt
    var userId: String

    enum CodingKeys: String, CodingKey {
        case idToken = "id_token", refreshToken = "refresh_token", expiresIn = "expires_in", userId = "user_id"
    }
}

/// `accounts:lookup`'s answer.
struct LookupResponse: Decodable {
    var users: [UserRecord]?
}

/// Identity Toolkit's user resource.
struct UserRecord: Decodable {
    struct Provider: Decodable {
        var providerId: String
        var rawId: String?
        var federatedId: String?
        var email: String?
        var displayName: String?
        var photoUrl: String?
    }

    var localId: String
    var email: String?
    var emailVerified: Bool?
    var displayName: String?
    var photoUrl: String?
    var tenantId: String?
    var providerUserInfo: [Provider]?
    /// Milliseconds.
    var createdAt: LenientInt?
    /// Milliseconds.
    var lastLoginAt: LenientInt?

    func profile(isAnonymous: Bool) -> UserProfile {
        let providers = (providerUserInfo ?? []).map { provider in
            ProviderInfo(
                providerId: provider.providerId, uid: provider.rawId ?? provider.federatedId ?? "", email: provider.email,
                displayName: provider.displayName, photoURL: provider.photoUrl)
        }
        return UserProfile(
            uid: localId, email: email, emailVerified: emailVerified ?? false, displayName: displayName, photoURL: photoUrl,
            tenantId: tenantId, providerData: providers, isAnonymous: isAnonymous && providers.isEmpty && email == nil,
            creationDate: createdAt.map { Date(timeIntervalSince1970: Double($0.value) / 1000) },
            lastSignInDate: lastLoginAt.map { Date(timeIntervalSince1970: Double($0.value) / 1000) })
    }
}

/// `sendOobCode`'s and `resetPassword`'s answers.
struct EmailActionResponse: Decodable {
    var email: String?
    var requestType: String?
}

/// An answer with nothing this SDK reads (`accounts:delete`).
struct EmptyResponse: Decodable {}

/// An integer Identity Toolkit may send as a JSON number or as a string of digits.
struct LenientInt: Decodable {
    var value: Int64

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            value = number
        } else if let number = Int64(try container.decode(String.self)) {
            value = number
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an integer")
        }
    }
}

/// The error envelope: `{"error":{"code":400,"message":"EMAIL_EXISTS"}}`.
struct ErrorEnvelope: Decodable {
    struct Body: Decodable {
        var code: Int?
        var message: String
    }

    var error: Body
}
