import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `POST /v1/token` (securetoken): `grant_type=refresh_token`, form-encoded or JSON.
struct TokenRoutes {
    let tokens: TokenService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("token") { request, context in
            let body = try await RefreshTokenRequest.decode(from: request, context: context)
            guard body.grantType == "refresh_token" else { throw AuthError(.invalidGrantType) }
            guard let presented = body.refreshToken, !presented.isEmpty else { throw AuthError(.missingRefreshToken) }
            let (session, user) = try await tokens.refresh(presented)
            context.tenant.set(user.scope)
            return RefreshTokenResponse(
                accessToken: session.idToken, idToken: session.idToken, refreshToken: session.refreshToken,
                expiresIn: String(session.expiresIn), userId: user.uid, projectId: tokens.projectId)
        }
    }
}
