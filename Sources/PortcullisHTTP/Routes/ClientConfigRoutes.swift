import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisStore

/// The Identity Toolkit v2 calls the client SDKs make (API key required): the tenant's
/// password policy (`validatePassword`), reCAPTCHA's configuration (always off), and
/// revoking a provider's token before an account is deleted (`revokeAccessToken`).
struct ClientConfigRoutes {
    let tenants: TenantSettingsCache
    let revocation: ProviderTokenRevocationService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("passwordPolicy") { request, context in
            let tenant = TenantScope(Self.tenant(request))
            context.tenant.set(tenant)
            let settings = try await EndUserTenant.resolve(tenant, in: tenants).settings
            return PasswordPolicyResponse(settings.passwordPolicy)
        }
        group.get("recaptchaConfig") { request, context in
            let tenant = TenantScope(Self.tenant(request))
            context.tenant.set(tenant)
            // An unknown tenant is refused as everywhere else; the answer is the same for all.
            _ = try await tenants.settings(tenant: tenant)
            return RecaptchaConfigResponse()
        }
        group.post("accounts:revokeToken") { request, context in
            let body = try await request.decode(as: RevokeTokenRequest.self, context: context)
            try await revocation.revoke(
                .init(providerId: body.providerId, tokenType: body.tokenType, token: body.token, idToken: body.idToken),
                tenantId: body.tenant)
            return EmptyObjectResponse()
        }
    }

    /// The `tenantId` query parameter (absent or empty: project users).
    private static func tenant(_ request: Request) -> String? {
        request.uri.queryParameters.get("tenantId").flatMap { $0.isEmpty ? nil : $0 }
    }
}
