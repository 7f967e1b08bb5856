/// A proof of identity to sign in, reauthenticate or link with.
public struct AuthCredential: Sendable {
    enum Kind: Sendable {
        case password(email: String, password: String)
        case identityProvider(providerId: String, idToken: String?, accessToken: String?, nonce: String?)
    }

    let kind: Kind

    /// An email and password.
    public static func emailPassword(email: String, password: String) -> AuthCredential {
        AuthCredential(kind: .password(email: email, password: password))
    }

    /// A federated identity provider's token: an OIDC ID token (with the raw `nonce` the
    /// app put in its authorisation request, if it sent one) or an OAuth access token.
    ///
    /// `providerId` is `google.com`, `apple.com`, `oidc.<name>`, …
    public static func identityProvider(
        _ providerId: String, idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil
    ) -> AuthCredential {
        AuthCredential(kind: .identityProvider(providerId: providerId, idToken: idToken, accessToken: accessToken, nonce: nonce))
    }

    /// The provider this credential proves: `password`, `google.com`, …
    public var providerId: String {
        switch kind {
        case .password: "password"
        case .identityProvider(let providerId, _, _, _): providerId
        }
    }
}

/// What a sign-in came to.
public struct AuthResult: Sendable {
    /// The signed-in user.
    public let user: User
    /// Whether the sign-in created the account.
    public let isNewUser: Bool
    /// The provider signed in with (`password`, `anonymous`, `custom`, `google.com`, …).
    public let providerId: String
    /// For a federated sign-in: the provider's claims or user-info answer, as JSON text.
    public let rawUserInfo: String?
}
