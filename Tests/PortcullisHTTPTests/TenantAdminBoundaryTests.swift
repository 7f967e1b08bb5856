import Foundation
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

/// What a malicious tenant admin (a tenant-scoped key) must not reach: the operator's mail
/// channels, the hashing pool through costly imports, a deleted tenant's credentials.
@Suite("Tenant admin boundaries")
struct TenantAdminBoundaryTests {
    @Test("a tenant key may choose the webhook only; SENDMAIL's From must be at an operator-allowed domain")
    func mailChannels() async throws {
        try await TestGateway.run(configure: { $0.emailDelivery.allowedFromDomains = ["mail.operator.example"] }) { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let tenantKey = try await gateway.key(.tenant(tenant))
            let path = "\(gateway.tenants)/\(tenant)?updateMask=emailDelivery"
            for channel in [#"{"channel":"SENDMAIL","from":"ceo@bank.example"}"#, #"{"channel":"SENDMAIL"}"#, #"{"channel":"LOG"}"#] {
                let refused = try await gateway.send(.patch, path, json: #"{"emailDelivery":\#(channel)}"#, key: tenantKey)
                refused.expectEnvelope(.forbidden, "PERMISSION_DENIED")
            }
            let webhook = try await gateway.send(
                .patch, path, json: #"{"emailDelivery":{"channel":"WEBHOOK","webhookUri":"https://hooks.tenant.example/mail"}}"#,
                key: tenantKey)
            #expect(webhook.status == .ok, "\(String(buffer: webhook.body))")

            // A project key may choose SENDMAIL, with a sender at an allowed domain only.
            try await gateway.send(.patch, path, json: #"{"emailDelivery":{"channel":"SENDMAIL","from":"Bank <ceo@bank.example>"}}"#)
                .expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            let allowed = try await gateway.send(
                .patch, path, json: #"{"emailDelivery":{"channel":"SENDMAIL","from":"Acme <acme@mail.operator.example>"}}"#)
            #expect(allowed.status == .ok, "\(String(buffer: allowed.body))")
            // The tenant key may still PATCH other fields, but not the sender the operator chose.
            try await gateway.patchTenant(tenant, mask: "displayName", #"{"displayName":"renamed"}"#)
            let renamed = try await gateway.send(
                .patch, "\(gateway.tenants)/\(tenant)?updateMask=displayName", json: #"{"displayName":"by tenant"}"#, key: tenantKey)
            #expect(renamed.status == .ok, "\(String(buffer: renamed.body))")
            let resent = try await gateway.send(
                .patch, path, json: #"{"emailDelivery":{"channel":"SENDMAIL","from":"x@mail.operator.example"}}"#, key: tenantKey)
            resent.expectEnvelope(.forbidden, "PERMISSION_DENIED")
        }
    }

    @Test("an import refuses hashes that cost more to verify than the largest scrypt, by index and reason")
    func importCosts() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let bcrypt15 = Base64URL.encode(Array("$2b$15$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO".utf8))
            let bcrypt12 = Base64URL.encode(Array("$2b$12$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO".utf8))
            let bcrypt = try await UserImportTests.batchCreate(
                gateway, tenant: tenant,
                .object([
                    "hashAlgorithm": "BCRYPT",
                    "users": .array([
                        .object(["localId": "costly", "email": "costly@example.com", "passwordHash": .string(bcrypt15)]),
                        .object(["localId": "fine", "email": "fine@example.com", "passwordHash": .string(bcrypt12)]),
                    ]),
                ]))
            #expect(bcrypt.status == .ok, "\(String(buffer: bcrypt.body))")
            let errors = try bcrypt.json().list(at: ["error"])
            #expect(errors.count == 1)
            #expect(errors.first?.value(at: ["index"]) == .integer(0))
            #expect(errors.first?.string(at: ["message"])?.contains("largest scrypt") == true, "\(errors)")

            let digest = Base64URL.encode([UInt8](repeating: 9, count: 1024))
            let pbkdf2 = try await UserImportTests.batchCreate(
                gateway, tenant: tenant,
                .object([
                    "hashAlgorithm": "PBKDF2_SHA256", "rounds": 120_000,
                    "users": .array([.object(["localId": "long", "passwordHash": .string(digest), "salt": "c2FsdA"])]),
                ]))
            #expect(pbkdf2.status == .ok, "\(String(buffer: pbkdf2.body))")
            let refused = try pbkdf2.json().list(at: ["error"])
            #expect(refused.first?.value(at: ["index"]) == .integer(0))
            #expect(refused.first?.string(at: ["message"])?.contains("largest scrypt") == true, "\(refused)")
            let lookup = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:lookup", json: #"{"localId":["costly","long"]}"#)
            #expect(try lookup.json().list(at: ["users"]).isEmpty)
        }
    }

    @Test("a deleted tenant's admin key, service-account tokens and providers die with it; its id is retired")
    func deletedTenant() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let tenantKey = try await gateway.key(.tenant(tenant))
            let signer = try await TestSigner.create(gateway, tenant: tenant)
            let token = try signer.mint(uid: "kept", ["tenant_id": .string(tenant)])
            #expect(try await CustomTokenTests.signIn(gateway, token, tenant: tenant).status == .ok)
            let provider = try await gateway.send(
                .post, "\(gateway.tenants)/\(tenant)/defaultSupportedIdpConfigs?idpId=google.com",
                json: #"{"enabled":true,"clientId":"c"}"#)
            #expect(provider.status == .ok, "\(String(buffer: provider.body))")

            #expect(try await gateway.send(.delete, "\(gateway.tenants)/\(tenant)").status == .ok)
            try await gateway.send(.get, "\(gateway.tenants)/\(tenant)", key: tenantKey).expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            try await CustomTokenTests.signIn(gateway, token, tenant: tenant).expectEnvelope(.badRequest, "TENANT_NOT_FOUND")
            let rows = try await gateway.server.database.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT (SELECT count(*) FROM admin_keys WHERE tenant_id = \(tenant))
                         + (SELECT count(*) FROM service_accounts WHERE tenant_id = \(tenant))
                         + (SELECT count(*) FROM identity_providers WHERE tenant_id = \(tenant)),
                           (SELECT count(*) FROM retired_tenant_ids WHERE tenant_id = \(tenant))
                    """, logger: TestDatabase.logger)
                var counts: (Int64, Int64) = (-1, -1)
                for try await row in rows.decode((Int64, Int64).self) { counts = row }
                return counts
            }
            #expect(rows == (0, 1))
        }
    }

    @Test("a retired id is never handed out again")
    func retiredIds() async throws {
        try await TestGateway.run { gateway in
            let tenants = TenantRepository(database: gateway.server.database, logger: TestDatabase.logger)
            var settings = TenantSettings()
            settings.displayName = "Reborn"
            let first = try await tenants.create(settings: settings, actor: "test", id: "reborn-aaaaa")
            #expect(first?.id == "reborn-aaaaa")
            #expect(try await tenants.delete(id: "reborn-aaaaa", actor: "test"))
            #expect(try await tenants.create(settings: settings, actor: "test", id: "reborn-aaaaa") == nil)
            #expect(try await tenants.find(id: "reborn-aaaaa") == nil)
        }
    }
}
