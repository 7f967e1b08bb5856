import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto

/// `/v1/accounts:*`: the end-user Identity Toolkit endpoints (API key required).
struct AccountRoutes {
    let accounts: AccountService
    let emailActions: EmailActionService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("accounts:signUp") { request, context in
            let body = try await request.decode(as: SignUpRequest.self, context: context)
            let result = try await accounts.signUp(
                tenantId: body.tenant, email: body.email, password: body.password, profile: body.profile,
                idToken: body.idToken, client: context.clientAddress)
            let tokens = TokenFields(result.tokens)
            return SignUpResponse(
                localId: result.user.uid, email: result.user.email, displayName: result.user.displayName,
                idToken: tokens.idToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn)
        }
        group.post("accounts:signInWithPassword") { request, context in
            let body = try await request.decode(as: SignInRequest.self, context: context)
            let result = try await accounts.signIn(
                tenant: TenantScope(body.tenant), email: body.email, password: body.password, client: context.clientAddress)
            let tokens = TokenFields(result.tokens)
            return SignInResponse(
                localId: result.user.uid, email: result.user.email ?? "", displayName: result.user.displayName ?? "",
                idToken: tokens.idToken, refreshToken: tokens.refreshToken, expiresIn: tokens.expiresIn)
        }
        group.post("accounts:lookup") { request, context in
            let body = try await request.decode(as: IDTokenRequest.self, context: context)
            let user = try await accounts.lookup(idToken: body.idToken, tenantId: body.tenant)
            context.tenant.set(user.scope)
            return LookupResponse(users: [UserInfo(user)])
        }
        group.post("accounts:update") { request, context in
            let body = try await request.decode(as: UpdateAccountRequest.self, context: context)
            if body.oobCode != nil {
                let (applied, user) = try await emailActions.apply(code: body.oobCode, tenant: TenantScope(body.tenant))
                return SetAccountInfoResponse(user, newEmail: applied.kind == .verifyAndChangeEmail ? applied.email : nil)
            }
            let (user, tokens) = try await accounts.update(
                idToken: body.idToken, tenantId: body.tenant,
                changes: .init(
                    email: body.email, password: body.password, profile: body.profile,
                    deleteAttributes: Set(body.deleteAttribute ?? []), deleteProviders: Set(body.deleteProvider ?? [])))
            context.tenant.set(user.scope)
            return SetAccountInfoResponse(user, tokens: tokens)
        }
        group.post("accounts:delete") { request, context in
            let body = try await request.decode(as: IDTokenRequest.self, context: context)
            try await accounts.deleteSelf(idToken: body.idToken, tenantId: body.tenant)
            return KindResponse(kind: "identitytoolkit#DeleteAccountResponse")
        }
        group.post("accounts:createAuthUri") { request, context in
            let body = try await request.decode(as: CreateAuthUriRequest.self, context: context)
            let methods = try await accounts.signInMethods(tenant: TenantScope(body.tenant), email: body.identifier ?? body.email)
            return CreateAuthUriResponse(
                sessionId: String(SecretToken.random(byteCount: 20).prefix(27)), registered: methods.map { !$0.isEmpty },
                allProviders: methods, signinMethods: methods)
        }
    }
}
