public import Hummingbird
public import PortcullisAuth
import PortcullisCrypto

/// Every route of the gateway over `services`: the admin API behind admin keys, the
/// end-user API behind API keys, and the public paths (JWKS, the action page, health).
public func buildRouter(
    _ services: AuthServices, configuration: ServerConfiguration, metrics: HTTPMetrics, drain: Drain
) -> Router<PortcullisRequestContext> {
    let projectId = configuration.projectId
    let router = Router(context: PortcullisRequestContext.self)
    router.add(middleware: ErrorEnvelopeMiddleware())
    if !configuration.trustedProxies.isEmpty {
        router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
    }
    HealthRoutes(
        database: services.database, migrator: services.migrator, metrics: metrics,
        counters: [metrics.tenantRequests, services.tokens.signIns], drain: drain
    ).register(on: router)

    let authenticator = AdminAuthenticator(
        keys: services.adminKeys, projectId: projectId,
        acceptsEmulatorAdminCredential: configuration.acceptsEmulatorAdminCredential)
    let admin = router.group("v2/projects/{project}").add(middleware: authenticator)
    TenantRoutes(service: services.tenantAdmin, projectId: projectId).register(on: admin)
    ProjectConfigRoutes(service: services.tenantAdmin, projectId: projectId).register(on: admin)
    AdminKeyRoutes(service: services.adminKeys, projectId: projectId).register(on: admin)
    AuditRoutes(service: services.auditLog).register(on: admin)
    IdentityProviderRoutes(service: services.identityProviders, projectId: projectId).register(on: admin)
    ServiceAccountRoutes(service: services.serviceAccounts, projectId: projectId).register(on: admin)
    WebhookSecretRoutes(delivery: services.emailDelivery).register(on: admin)
    let legacyAdmin = router.group("admin/v2/projects/{project}").add(middleware: authenticator)
    ProjectConfigRoutes(service: services.tenantAdmin, projectId: projectId).register(on: legacyAdmin)

    let keyRoutes = KeyRoutes(
        keyrings: services.keyrings, tokens: services.tokens, tenants: services.tenantSettings, projectId: projectId,
        publicURL: configuration.publicURL)
    keyRoutes.registerPublic(on: router)
    keyRoutes.registerAdmin(on: admin)
    let adminV1 = router.group("v1/projects/{project}").add(middleware: authenticator)
    AdminAccountRoutes(accounts: services.adminAccounts).register(on: adminV1)
    let emailActionRoutes = EmailActionRoutes(emailActions: services.emailActions)
    emailActionRoutes.registerAdmin(on: adminV1)
    UserImportRoutes(imports: services.userImports).register(on: adminV1)

    let apiKeys = APIKeyMiddleware(keys: configuration.apiKeys)
    let endUser = router.group("v1").add(middleware: apiKeys)
    AccountRoutes(accounts: services.accounts, emailActions: services.emailActions).register(on: endUser)
    emailActionRoutes.register(on: endUser)
    ActionPageRoutes(
        emailActions: services.emailActions, apiKeys: apiKeys, formTokens: ActionFormTokens(masterKey: configuration.masterKey)
    ).register(on: router)
    FederatedSignInRoutes(service: services.federated).register(on: endUser)
    CustomTokenRoutes(customTokens: services.customTokens).register(on: endUser)
    TokenRoutes(tokens: services.tokens).register(on: endUser)
    PublicProjectConfigRoutes(tenants: services.tenantSettings, projectId: projectId, publicURL: configuration.publicURL)
        .register(on: endUser)
    ClientConfigRoutes(tenants: services.tenantSettings, revocation: services.providerTokens)
        .register(on: router.group("v2").add(middleware: apiKeys))
    VerifyRoutes(tokens: services.tokens, revocation: services.revocation).register(on: router)
    return router
}
