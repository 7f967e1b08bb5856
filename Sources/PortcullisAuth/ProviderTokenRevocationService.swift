import PortcullisCore
import PortcullisJSON
public import PortcullisOutbound
public import PortcullisStore

/// `POST /v2/accounts:revokeToken`: a signed-in user asks that a token a provider issued
/// them be revoked at that provider. The Firebase SDKs call it (`revokeAccessToken`) before
/// deleting a Sign in with Apple account, which the App Store requires.
///
/// When the tenant's provider configuration holds what revocation needs (its client id and
/// client secret; for Apple, the client secret JWT the developer signs), the token is sent
/// to the provider's revocation endpoint (RFC 7009) through the outbound client. Otherwise
/// nothing can be revoked from here: the request succeeds, as the SDK expects, and the audit
/// log records that the provider was not called, so an operator can see it.
public struct ProviderTokenRevocationService: Sendable {
    let accounts: AccountService
    let providers: IdentityProviderCache
    let client: OutboundHTTPClient
    let audit: AuditLogRepository

    /// A service revoking through `client`, recording in `audit`.
    public init(accounts: AccountService, providers: IdentityProviderCache, client: OutboundHTTPClient, audit: AuditLogRepository) {
        self.accounts = accounts
        self.providers = providers
        self.client = client
        self.audit = audit
    }

    /// An `accounts:revokeToken` request.
    public struct Request: Sendable {
        /// `apple.com` (the only provider Identity Platform revokes for).
        public var providerId: String?
        /// `ACCESS_TOKEN`, `REFRESH_TOKEN` or `CODE` (or their enum numbers, as iOS sends them).
        public var tokenType: String?
        /// The provider's token.
        public var token: String?
        /// The signed-in user's ID token.
        public var idToken: String?

        /// A request.
        public init(providerId: String?, tokenType: String?, token: String?, idToken: String?) {
            self.providerId = providerId
            self.tokenType = tokenType
            self.token = token
            self.idToken = idToken
        }
    }

    /// Revokes the token at its provider when it can; `tenantId` is the one the body names.
    /// - Returns: whether the provider was called (and accepted it).
    @discardableResult
    public func revoke(_ request: Request, tenantId named: String?) async throws -> Bool {
        let (user, _) = try await accounts.signedInCaller(idToken: request.idToken, tenantId: named)
        let tenant = user.scope
        guard request.providerId == "apple.com" else {
            throw AuthError(.invalidArgument, detail: "providerId: only apple.com tokens can be revoked")
        }
        guard let token = request.token, !token.isEmpty, token.utf8.count <= 4096 else {
            throw AuthError(.invalidArgument, detail: "token is required")
        }
        let hint: String
        switch request.tokenType {
        case "ACCESS_TOKEN"?, "2"?: hint = "access_token"
        case "REFRESH_TOKEN"?, "1"?: hint = "refresh_token"
        case "CODE"?, "3"?: hint = "authorization_code"
        default: throw AuthError(.invalidArgument, detail: "tokenType must be ACCESS_TOKEN, REFRESH_TOKEN or CODE")
        }
        let provider = try await providers.provider("apple.com", tenant: tenant)
        var revoked = false
        if let provider, provider.enabled, let secret = provider.clientSecret, let endpoint = provider.effectiveRevocationURI {
            let form = URLEncodedForm.encode([
                ("client_id", provider.clientId), ("client_secret", secret), ("token", token), ("token_type_hint", hint),
            ])
            do {
                _ = try await client.post(
                    endpoint, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8))
            } catch {
                throw AuthError(.invalidIdpResponse, detail: "apple.com did not revoke the token: \(error)")
            }
            revoked = true
        }
        try await audit.record(
            AuditEntry(
                tenantId: tenant.tenantId, actor: "user:\(user.uid)", action: "user.provider_token_revoke", target: "users/\(user.uid)",
                after: .object(["providerId": "apple.com", "tokenType": .string(hint), "revokedAtProvider": .bool(revoked)])))
        return revoked
    }
}
