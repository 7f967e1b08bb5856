import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// A gateway with a tenant whose providers all point at one fake identity provider on
/// loopback (allowed by `outbound.allowed_private_networks`).
struct FederationFixture {
    let gateway: TestGateway
    let idp: FakeIdentityProvider
    let tenant: String

    /// Every provider the tests configure, all served by the fake IdP.
    static let providers = ["google.com", "apple.com", "microsoft.com", "facebook.com", "github.com", "oidc.corp"]

    static let loopback = [IPNetwork("127.0.0.0/8"), IPNetwork("::1/128")].compactMap { $0 }

    /// Runs `body` against a gateway (loopback allowed unless `allowLoopback` is off) and a
    /// fake IdP configured as every provider of ``providers`` for a new tenant.
    static func run(
        allowLoopback: Bool = true, tenantSettings: String = #"{"displayName":"fed","allowPasswordSignup":true}"#,
        configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (FederationFixture) async throws -> Void
    ) async throws {
        try await FakeIdentityProvider.run { idp in
            try await TestGateway.run(configure: {
                $0.outboundAllowedNetworks = allowLoopback ? loopback : []
                configure(&$0)
            }) { gateway in
                let tenant = try await gateway.createTenant(tenantSettings)
                let fixture = FederationFixture(gateway: gateway, idp: idp, tenant: tenant)
                for provider in providers { try await fixture.configure(provider) }
                try await body(fixture)
            }
        }
    }

    /// Configures `providerId` for the tenant against the fake IdP (`jwksUri` overridable).
    func configure(_ providerId: String, enabled: Bool = true, jwksURI: String? = nil) async throws {
        let kind = IdentityProvider.isOIDC(providerId) ? "oauthIdpConfigs?oauthIdpConfigId=" : "defaultSupportedIdpConfigs?idpId="
        let body = JSONValue.object([
            "enabled": .bool(enabled), "clientId": .string(idp.audience), "issuer": .string(idp.issuer),
            "jwksUri": .string(jwksURI ?? idp.jwksURL), "userInfoUri": .string(idp.userInfoURL),
        ])
        let path = "/v2/projects/\(TestGateway.projectId)/tenants/\(tenant)/\(kind)\(providerId)"
        let response = try await gateway.send(.post, path, json: body.serialized())
        guard response.status == .ok else { throw TestSetupError("configuring \(providerId): \(String(buffer: response.body))") }
    }

    /// `accounts:signInWithIdp` with an ID token (or, with `accessToken`, an access token).
    func signIn(
        _ providerId: String, idToken: String? = nil, accessToken: String? = nil, linkTo: String? = nil,
        extra: [String: JSONValue] = [:]
    ) async throws -> TestResponse {
        var postBody = "providerId=\(providerId)"
        if let idToken { postBody += "&id_token=\(idToken)" }
        if let accessToken { postBody += "&access_token=\(accessToken)" }
        var body: [String: JSONValue] = [
            "postBody": .string(postBody), "requestUri": .string("http://localhost"), "returnSecureToken": .bool(true),
        ]
        if let linkTo { body["idToken"] = .string(linkTo) }
        body.merge(extra) { _, new in new }
        return try await gateway.endUser("accounts:signInWithIdp", body, tenant: tenant)
    }

    /// Signs in with a token the fake IdP mints for `sub` and `email`; must succeed with tokens.
    func session(
        _ providerId: String, sub: String, email: String?, emailVerified: Bool = true, name: String? = "Fed User",
        extraClaims: [String: JSONValue] = [:]
    ) async throws -> (Session, JSONValue) {
        let response = try await signIn(
            providerId,
            idToken: idp.idToken(
                sub: sub, email: email, emailVerified: .bool(emailVerified), name: name, extraClaims: extraClaims))
        guard response.status == .ok else { throw TestSetupError("signInWithIdp: \(String(buffer: response.body))") }
        let json = try response.json()
        return (try Session(json), json)
    }
}
