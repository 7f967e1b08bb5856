import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON

/// `accounts:signInWithIdp`: an IdP credential in `postBody`, and optionally the ID token
/// of the account to link it to.
struct SignInWithIdpRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    /// `providerId=…&id_token=…` or `…&access_token=…` (and `nonce=…`).
    let postBody: String?
    /// Where the client received the credential; required by Identity Toolkit, unused here
    /// (Portcullis exchanges tokens, not authorization codes).
    let requestUri: String?
    /// Links the identity to this account instead of signing in.
    let idToken: String?
    /// Echo the IdP credential in the answer (`oauthIdToken`, `oauthAccessToken`).
    let returnIdpCredential: Bool?
}

/// `accounts:signInWithIdp`'s answer (Identity Toolkit's `VerifyAssertionResponse`).
///
/// A `needConfirmation` answer names the email, provider and identity and carries no
/// tokens and no `localId`: the account belongs to whoever proves the email another way.
struct SignInWithIdpResponse: ResponseEncodable {
    var kind = "identitytoolkit#VerifyAssertionResponse"
    let federatedId: String
    let providerId: String
    let localId: String?
    let email: String?
    let emailVerified: Bool
    let displayName: String?
    let fullName: String?
    let photoUrl: String?
    let isNewUser: Bool?
    let needConfirmation: Bool?
    /// The verified claims (or user-info answer) as a JSON string, as Identity Toolkit sends it.
    let rawUserInfo: String
    let idToken: String?
    let refreshToken: String?
    let expiresIn: String?
    let oauthIdToken: String?
    let oauthAccessToken: String?

    init(_ outcome: FederatedSignInService.Outcome, credential: FederatedCredential?) {
        let identity = outcome.identity
        let tokens = outcome.tokens.map(TokenFields.init)
        federatedId = identity.federatedId
        providerId = identity.providerId
        localId = outcome.needConfirmation ? nil : outcome.user.uid
        email = identity.email
        emailVerified = outcome.provesEmail
        displayName = identity.displayName
        fullName = identity.displayName
        photoUrl = identity.photoURL
        isNewUser = outcome.needConfirmation ? nil : outcome.isNewUser
        needConfirmation = outcome.needConfirmation ? true : nil
        rawUserInfo = identity.rawUserInfo.serialized()
        idToken = tokens?.idToken
        refreshToken = tokens?.refreshToken
        expiresIn = tokens?.expiresIn
        oauthIdToken = credential?.idToken
        oauthAccessToken = credential?.accessToken
    }
}
