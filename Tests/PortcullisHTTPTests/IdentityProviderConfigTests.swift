import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("Identity provider configuration (admin)")
struct IdentityProviderConfigTests {
    static let project = "/v2/projects/\(TestGateway.projectId)"

    @Test("a built-in provider: create, read without its secret, list, PATCH by mask, delete")
    func builtInLifecycle() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let base = "\(Self.project)/tenants/\(tenant)/defaultSupportedIdpConfigs"
            let created = try await gateway.send(
                .post, "\(base)?idpId=google.com",
                json: #"{"enabled":true,"clientId":"web.apps.example","clientSecret":"s3cret-value","client_ids":["ios.apps.example"]}"#)
            #expect(created.status == .ok)
            let resource = try created.json()
            #expect(
                resource.value(at: ["name"])
                    == .string("projects/\(TestGateway.projectId)/tenants/\(tenant)/defaultSupportedIdpConfigs/google.com"))
            #expect(resource.value(at: ["clientIds"]) == .array([.string("ios.apps.example")]))
            #expect(!String(buffer: created.body).contains("s3cret-value"))

            let duplicate = try await gateway.send(.post, "\(base)?idpId=google.com", json: #"{"clientId":"x"}"#)
            #expect(duplicate.status == .conflict)
            #expect(duplicate.errorMessage == "CONFIGURATION_EXISTS")

            let patched = try await gateway.send(.patch, "\(base)/google.com?updateMask=enabled", json: #"{"enabled":false}"#)
            #expect(patched.status == .ok)
            #expect(try patched.json().value(at: ["enabled"]) == .bool(false))
            #expect(try patched.json().value(at: ["clientId"]) == .string("web.apps.example"))

            let read = try await gateway.send(.get, "\(base)/google.com")
            #expect(read.status == .ok)
            #expect(!String(buffer: read.body).contains("s3cret-value"))
            // The secret is kept (not returned) across a PATCH that does not name it.
            let stored = try await gateway.server.database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT client_secret FROM identity_providers WHERE tenant_id = \(tenant) AND provider_id = 'google.com'",
                    logger: TestDatabase.logger)
                var secrets: [String?] = []
                for try await secret in rows.decode(String?.self) { secrets.append(secret) }
                return secrets
            }
            #expect(stored == ["s3cret-value"])

            let list = try await gateway.send(.get, base)
            guard case .array(let items)? = try list.json().value(at: ["defaultSupportedIdpConfigs"]) else {
                Issue.record("no list: \(String(buffer: list.body))")
                return
            }
            #expect(items.count == 1)
            #expect(try await gateway.send(.delete, "\(base)/google.com").status == .ok)
            let gone = try await gateway.send(.get, "\(base)/google.com")
            #expect(gone.status == .notFound)
            #expect(gone.errorMessage == "CONFIGURATION_NOT_FOUND")
        }
    }

    @Test("OIDC providers need an oidc.* id and an issuer; the kinds do not mix")
    func oidcValidation() async throws {
        try await TestGateway.run { gateway in
            let base = "\(Self.project)/oauthIdpConfigs"
            let noIssuer = try await gateway.send(.post, "\(base)?oauthIdpConfigId=oidc.corp", json: #"{"clientId":"c"}"#)
            #expect(noIssuer.status == .badRequest)
            let badId = try await gateway.send(
                .post, "\(base)?oauthIdpConfigId=corp", json: #"{"clientId":"c","issuer":"https://idp.example"}"#)
            #expect(badId.status == .badRequest)
            let badURL = try await gateway.send(
                .post, "\(base)?oauthIdpConfigId=oidc.corp",
                json: #"{"clientId":"c","issuer":"https://idp.example","jwksUri":"file:///etc/passwd"}"#)
            #expect(badURL.status == .badRequest)
            let created = try await gateway.send(
                .post, "\(base)?oauthIdpConfigId=oidc.corp",
                json: #"{"clientId":"c","issuer":"https://idp.example","jwksUri":"https://idp.example/jwks","enabled":true}"#)
            #expect(created.status == .ok)
            #expect(try created.json().value(at: ["name"]) == .string("projects/\(TestGateway.projectId)/oauthIdpConfigs/oidc.corp"))
            let builtInPath = try await gateway.send(
                .post, "\(Self.project)/defaultSupportedIdpConfigs?idpId=oidc.corp", json: #"{"clientId":"c"}"#)
            #expect(builtInPath.status == .badRequest)
            #expect(try await gateway.send(.get, "\(Self.project)/defaultSupportedIdpConfigs/oidc.corp").status == .notFound)
            let unknownMask = try await gateway.send(.patch, "\(base)/oidc.corp?updateMask=nope", json: "{}")
            #expect(unknownMask.status == .badRequest)
        }
    }

    @Test("a tenant admin key manages only its own tenant's providers")
    func tenantScope() async throws {
        try await TestGateway.run { gateway in
            let mine = try await gateway.createTenant()
            let other = try await gateway.createTenant()
            let key = try await gateway.key(.tenant(mine))
            let body = #"{"clientId":"c","enabled":true}"#
            let own = try await gateway.send(
                .post, "\(Self.project)/tenants/\(mine)/defaultSupportedIdpConfigs?idpId=github.com", json: body, key: key)
            #expect(own.status == .ok)
            let foreign = try await gateway.send(
                .post, "\(Self.project)/tenants/\(other)/defaultSupportedIdpConfigs?idpId=github.com", json: body, key: key)
            #expect(foreign.status == .forbidden)
            let project = try await gateway.send(
                .post, "\(Self.project)/defaultSupportedIdpConfigs?idpId=github.com", json: body, key: key)
            #expect(project.status == .forbidden)
            #expect(try await gateway.send(.get, "\(Self.project)/defaultSupportedIdpConfigs", key: key).status == .forbidden)
            let missing = try await gateway.send(.get, "\(Self.project)/tenants/nosuch-tenant/defaultSupportedIdpConfigs")
            #expect(missing.status == .notFound)
            #expect(missing.errorMessage == "TENANT_NOT_FOUND")
        }
    }

    @Test("a change on instance A reaches instance B's cache by NOTIFY")
    func changePropagates() async throws {
        let settings = try await TestDatabase.create()
        let a = try TestGateway.make(settings: settings)
        let b = try TestGateway.make(settings: settings)
        try await a.application.test(.router) { clientA in
            try await b.application.test(.router) { clientB in
                let key = try await a.services.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                let gatewayA = TestGateway(server: a, client: clientA, projectKey: key)
                let gatewayB = TestGateway(server: b, client: clientB, projectKey: key)
                let path = "\(Self.project)/defaultSupportedIdpConfigs"
                #expect(try await gatewayA.send(.post, "\(path)?idpId=apple.com", json: #"{"clientId":"c","enabled":true}"#).status == .ok)
                // B's listener is up once it has seen one change; B then caches the provider.
                #expect(
                    try await eventually { try await gatewayB.send(.get, "\(path)/apple.com").status == .ok } != nil)
                #expect(try await gatewayA.send(.patch, "\(path)/apple.com?updateMask=clientId", json: #"{"clientId":"d"}"#).status == .ok)
                let seen = try await eventually(within: .seconds(30)) {
                    try await gatewayB.send(.get, "\(path)/apple.com").json().value(at: ["clientId"]) == .string("d")
                }
                #expect(seen != nil)
            }
        }
    }
}
