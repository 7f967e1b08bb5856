import Hummingbird
import PortcullisCore

/// `accounts:signInWithCustomToken`. `returnSecureToken` is accepted and ignored: tokens
/// are always returned, as Identity Toolkit now does.
struct SignInWithCustomTokenRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    let token: String?
    let returnSecureToken: Bool?
}

/// `accounts:signInWithCustomToken`'s answer.
struct SignInWithCustomTokenResponse: ResponseEncodable {
    var kind = "identitytoolkit#VerifyCustomTokenResponse"
    let idToken: String
    let refreshToken: String
    let expiresIn: String
    let isNewUser: Bool
}
