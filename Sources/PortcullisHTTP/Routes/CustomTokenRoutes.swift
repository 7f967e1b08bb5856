import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `POST /v1/accounts:signInWithCustomToken` (API key required): exchanges a custom token
/// a customer's backend signed for an ID token and a refresh token.
struct CustomTokenRoutes {
    let customTokens: CustomTokenService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("accounts:signInWithCustomToken") { request, context in
            let body = try await request.decode(as: SignInWithCustomTokenRequest.self, context: context)
            let result = try await customTokens.signIn(token: body.token, tenant: TenantScope(body.tenant))
            let tokens = TokenFields(result.tokens)
            return SignInWithCustomTokenResponse(
                idToken: tokens.idToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn,
                isNewUser: result.isNewUser)
        }
    }
}
