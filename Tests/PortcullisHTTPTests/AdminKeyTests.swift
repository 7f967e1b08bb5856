import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@Suite("Admin keys")
struct AdminKeyTests {
    @Test("none 401, wrong 401, tenant key: its tenant 200, another tenant or project 403, revoked 401")
    func matrix() async throws {
        try await TestGateway.run { gateway in
            let mine = try await gateway.createTenant()
            let other = try await gateway.createTenant()
            let tenantKey = try await gateway.key(.tenant(mine))
            let project = "/v2/projects/\(TestGateway.projectId)"

            try await gateway.send(.get, "\(gateway.tenants)/\(mine)", key: .some(nil)).expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            for wrong in ["nonsense", "pcak_aaaaaaaaaaaaaaaa_bbbb", gateway.projectKey + "x", "AIzaSyFakeApiKey"] {
                try await gateway.send(.get, "\(gateway.tenants)/\(mine)", key: wrong).expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            }
            var basic = try await gateway.client.execute(
                uri: "\(gateway.tenants)/\(mine)", method: .get, headers: [.authorization: "Basic \(gateway.projectKey)"])
            basic.expectEnvelope(.unauthorized, "UNAUTHENTICATED")

            #expect(try await gateway.send(.get, "\(gateway.tenants)/\(mine)", key: tenantKey).status == .ok)
            #expect(
                try await gateway.send(
                    .patch, "\(gateway.tenants)/\(mine)?updateMask=client.permissions",
                    json: #"{"client":{"permissions":{"disabledUserSignup":true}}}"#,
                    key: tenantKey
                ).status == .ok)
            #expect(try await gateway.send(.get, "\(gateway.tenants)/\(mine)/auditEvents", key: tenantKey).status == .ok)
            for (method, path) in [
                (HTTPRequest.Method.get, "\(gateway.tenants)/\(other)"), (.patch, "\(gateway.tenants)/\(other)"),
                (.get, "\(gateway.tenants)/\(other)/auditEvents"), (.get, "\(gateway.tenants)/no-such-tenant"),
                (.get, gateway.tenants), (.post, gateway.tenants), (.delete, "\(gateway.tenants)/\(mine)"),
                (.get, "\(project)/config"), (.patch, "\(project)/config"), (.get, "/admin\(project)/config"),
                (.get, "\(project)/adminKeys"), (.post, "\(project)/adminKeys"), (.get, "\(project)/auditEvents"),
            ] {
                try await gateway.send(method, path, json: "{}", key: tenantKey).expectEnvelope(.forbidden, "PERMISSION_DENIED")
            }
            // The other tenant is unchanged by anything the tenant key tried.
            #expect(
                try await gateway.send(.get, "\(gateway.tenants)/\(other)").json()
                    .value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(false))

            let keyId = String(tenantKey.dropFirst(5).prefix(16))
            #expect(try await gateway.send(.delete, "\(project)/adminKeys/\(keyId)").status == .ok)
            try await gateway.send(.get, "\(gateway.tenants)/\(mine)", key: tenantKey).expectEnvelope(.unauthorized, "UNAUTHENTICATED")
            try await gateway.send(.delete, "\(project)/adminKeys/\(keyId)").expectEnvelope(.notFound, "ADMIN_KEY_NOT_FOUND")
            basic = try await gateway.send(.get, "\(gateway.tenants)/\(mine)")
            #expect(basic.status == .ok)
        }
    }

    @Test("created over HTTP: the secret is returned once and works; listing never shows it")
    func lifecycle() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let keys = "/v2/projects/\(TestGateway.projectId)/adminKeys"
            let created = try await gateway.send(.post, keys, json: #"{"displayName":"ops","tenantId":"\#(tenant)"}"#)
            #expect(created.status == .ok)
            let body = try created.json()
            guard case .string(let secret)? = body.value(at: ["secret"]), case .string(let keyId)? = body.value(at: ["keyId"])
            else { throw TestSetupError("no secret") }
            #expect(body.value(at: ["name"]) == .string("projects/\(TestGateway.projectId)/adminKeys/\(keyId)"))
            #expect(body.value(at: ["tenantId"]) == .string(tenant))
            #expect(try await gateway.send(.get, "\(gateway.tenants)/\(tenant)", key: secret).status == .ok)

            let listing = try await gateway.send(.get, keys)
            #expect(listing.status == .ok)
            let text = String(buffer: listing.body)
            #expect(text.contains(keyId) && !text.contains(secret) && !text.contains(String(secret.suffix(20))))

            try await gateway.send(.post, keys, json: #"{"displayName":"x","tenantId":"no-such"}"#).expectEnvelope(
                .notFound, "TENANT_NOT_FOUND")
            try await gateway.send(.post, keys, json: #"{"tenantId":"\#(tenant)"}"#).expectEnvelope(.badRequest, "INVALID_ARGUMENT")

            // Deleting the tenant removes its keys.
            #expect(try await gateway.send(.delete, "\(gateway.tenants)/\(tenant)").status == .ok)
            try await gateway.send(.get, "\(gateway.tenants)/\(tenant)", key: secret).expectEnvelope(.unauthorized, "UNAUTHENTICATED")
        }
    }
}
