import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@Suite("Tenant API")
struct TenantAPITests {
    @Test("create, get, patch, delete; a new tenant has every switch off unless set")
    func crud() async throws {
        try await TestGateway.run { gateway in
            let id = try await gateway.createTenant(#"{"displayName":"Acme","allowPasswordSignup":true}"#)
            #expect(id.hasPrefix("acme-"))
            let fetched = try await gateway.send(.get, "\(gateway.tenants)/\(id)").json()
            #expect(fetched.value(at: ["name"]) == .string("projects/\(TestGateway.projectId)/tenants/\(id)"))
            #expect(fetched.value(at: ["displayName"]) == .string("Acme"))
            #expect(fetched.value(at: ["allowPasswordSignup"]) == .bool(true))
            for path in [
                ["enableAnonymousUser"], ["disableAuth"], ["enableEmailLinkSignin"],
                ["client", "permissions", "disabledUserSignup"], ["client", "permissions", "disabledUserDeletion"],
                ["emailPrivacyConfig", "enableImprovedEmailPrivacy"],
            ] {
                #expect(fetched.value(at: path) == .bool(false), "\(path)")
            }
            #expect(fetched.value(at: ["signingAlgorithm"]) == .string("RS256"))

            let patched = try await gateway.send(
                .patch, "\(gateway.tenants)/\(id)?updateMask=client.permissions",
                json: #"{"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}"#)
            #expect(patched.status == .ok)
            #expect(try patched.json().value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(true))
            #expect(try patched.json().value(at: ["allowPasswordSignup"]) == .bool(true))

            #expect(try await gateway.send(.delete, "\(gateway.tenants)/\(id)").status == .ok)
            let gone = try await gateway.send(.get, "\(gateway.tenants)/\(id)")
            gone.expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            #expect(try gone.json().value(at: ["error", "status"]) == .string("NOT_FOUND"))
            try await gateway.send(.delete, "\(gateway.tenants)/\(id)").expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            try await gateway.send(.patch, "\(gateway.tenants)/\(id)", json: "{}").expectEnvelope(.notFound, "TENANT_NOT_FOUND")
        }
    }

    @Test("25 tenants in pages of 10: 10, 10, 5, each once")
    func paging() async throws {
        try await TestGateway.run { gateway in
            var created = Set<String>()
            for index in 0..<25 { created.insert(try await gateway.createTenant(#"{"displayName":"p\#(index)"}"#)) }
            var seen: [String] = []
            var sizes: [Int] = []
            var token: String?
            repeat {
                let query = "pageSize=10" + (token.map { "&pageToken=\($0)" } ?? "")
                let page = try await gateway.send(.get, "\(gateway.tenants)?\(query)").json()
                guard case .array(let items)? = page.value(at: ["tenants"]) else { throw TestSetupError("no tenants") }
                sizes.append(items.count)
                for item in items {
                    if case .string(let name)? = item.value(at: ["name"]) { seen.append(String(name.split(separator: "/").last!)) }
                }
                if case .string(let next)? = page.value(at: ["nextPageToken"]) { token = next } else { token = nil }
            } while token != nil && sizes.count < 10
            #expect(sizes == [10, 10, 5])
            #expect(seen.count == 25 && Set(seen) == created)
            try await gateway.send(.get, "\(gateway.tenants)?pageSize=0").expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await gateway.send(.get, "\(gateway.tenants)?pageSize=abc").expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await gateway.send(.get, "\(gateway.tenants)?pageToken=%25%25").expectEnvelope(.badRequest, "INVALID_ARGUMENT")
        }
    }

    @Test("updateMask changes only the masked fields; an empty mask replaces the resource; unknown paths are 400")
    func updateMask() async throws {
        try await TestGateway.run { gateway in
            let id = try await gateway.createTenant(
                #"{"displayName":"m","allowPasswordSignup":true,"enableAnonymousUser":true,"idTokenLifetimeSeconds":600}"#)
            let url = "\(gateway.tenants)/\(id)"
            let masked = try await gateway.send(
                .patch, "\(url)?updateMask=enableAnonymousUser,client.permissions.disabledUserSignup",
                json:
                    #"{"displayName":"ignored","allowPasswordSignup":false,"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}"#
            ).json()
            #expect(masked.value(at: ["displayName"]) == .string("m"))
            #expect(masked.value(at: ["allowPasswordSignup"]) == .bool(true))
            #expect(masked.value(at: ["enableAnonymousUser"]) == .bool(false))
            #expect(masked.value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(true))
            #expect(masked.value(at: ["client", "permissions", "disabledUserDeletion"]) == .bool(false))
            #expect(masked.value(at: ["idTokenLifetimeSeconds"]) == .integer(600))

            let snake = try await gateway.send(
                .patch, "\(url)?update_mask=x&updateMask=id_token_lifetime_seconds", json: #"{"id_token_lifetime_seconds":"900"}"#
            ).json()
            #expect(snake.value(at: ["idTokenLifetimeSeconds"]) == .integer(900))

            let replaced = try await gateway.send(.patch, url, json: #"{"displayName":"whole"}"#).json()
            #expect(replaced.value(at: ["displayName"]) == .string("whole"))
            #expect(replaced.value(at: ["allowPasswordSignup"]) == .bool(false))
            #expect(replaced.value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(false))
            #expect(replaced.value(at: ["idTokenLifetimeSeconds"]) == .integer(3600))

            for mask in ["nope", "client.nope", "name", "displayName,bogus"] {
                try await gateway.send(.patch, "\(url)?updateMask=\(mask)", json: "{}").expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            }
            try await gateway.send(.patch, "\(url)?updateMask=idTokenLifetimeSeconds", json: #"{"idTokenLifetimeSeconds":0}"#)
                .expectEnvelope(.badRequest, "INVALID_ARGUMENT : idTokenLifetimeSeconds")
            // Nothing above changed the stored tenant.
            #expect(try await gateway.send(.get, url).json().value(at: ["displayName"]) == .string("whole"))
        }
    }

    @Test("a wrong project id is 404 on every admin path")
    func wrongProject() async throws {
        try await TestGateway.run { gateway in
            let id = try await gateway.createTenant()
            for (method, path) in [
                (HTTPRequest.Method.get, "/v2/projects/other/tenants"), (.post, "/v2/projects/other/tenants"),
                (.get, "/v2/projects/other/tenants/\(id)"), (.patch, "/v2/projects/other/tenants/\(id)"),
                (.get, "/v2/projects/other/config"), (.get, "/admin/v2/projects/other/config"),
                (.get, "/v2/projects/other/adminKeys"),
            ] {
                let response = try await gateway.send(method, path, json: "{}")
                response.expectEnvelope(.notFound, "PROJECT_NOT_FOUND")
            }
        }
    }

    @Test("project config: same fields as a tenant, also under /admin/v2 and the emulator prefix")
    func projectConfig() async throws {
        try await TestGateway.run { gateway in
            let config = "/v2/projects/\(TestGateway.projectId)/config"
            #expect(try await gateway.send(.get, config).json().value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(false))
            let patched = try await gateway.send(
                .patch, "/admin\(config)?updateMask=client.permissions.disabledUserSignup",
                json: #"{"client":{"permissions":{"disabledUserSignup":true}}}"#)
            #expect(patched.status == .ok)
            #expect(try patched.json().value(at: ["name"]) == .string("projects/\(TestGateway.projectId)/config"))
            let viaEmulator = try await gateway.send(.get, "/identitytoolkit.googleapis.com\(config)").json()
            #expect(viaEmulator.value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(true))
            #expect(try await gateway.server.services.tenantSettings.settings(tenant: .project).permissions.disabledUserSignup)
        }
    }

    @Test("the toggle is audited with who, before and after; other tenants are untouched")
    func audit() async throws {
        try await TestGateway.run { gateway in
            let a = try await gateway.createTenant()
            let b = try await gateway.createTenant()
            try await gateway.send(
                .patch, "\(gateway.tenants)/\(a)?updateMask=client.permissions",
                json: #"{"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}"#)
            #expect(
                try await gateway.send(.get, "\(gateway.tenants)/\(b)").json()
                    .value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(false))
            let events = try await gateway.send(.get, "\(gateway.tenants)/\(a)/auditEvents").json()
            guard case .array(let items)? = events.value(at: ["auditEvents"]), let latest = items.first else {
                throw TestSetupError("no audit events")
            }
            #expect(items.count == 2)
            #expect(latest.value(at: ["action"]) == .string("tenant.update"))
            guard case .string(let actor)? = latest.value(at: ["actor"]) else { throw TestSetupError("no actor") }
            #expect(actor.hasPrefix("adminKey:") && gateway.projectKey.contains(actor.dropFirst("adminKey:".count)))
            #expect(latest.value(at: ["before", "client", "permissions", "disabledUserSignup"]) == .bool(false))
            #expect(latest.value(at: ["after", "client", "permissions", "disabledUserDeletion"]) == .bool(true))
            let all = try await gateway.send(.get, "/v2/projects/\(TestGateway.projectId)/auditEvents?pageSize=2").json()
            guard case .array(let page)? = all.value(at: ["auditEvents"]) else { throw TestSetupError("no events") }
            #expect(page.count == 2)
            #expect(all.value(at: ["nextPageToken"]) != nil)

            // A tenant that never was has no log: 404, as on every admin path. A deleted one keeps its own.
            try await gateway.send(.get, "\(gateway.tenants)/never-was/auditEvents").expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            #expect(try await gateway.send(.delete, "\(gateway.tenants)/\(b)").status == .ok)
            let kept = try await gateway.send(.get, "\(gateway.tenants)/\(b)/auditEvents").json()
            #expect(kept.list(at: ["auditEvents"]).compactMap { $0.string(at: ["action"]) } == ["tenant.delete", "tenant.create"])
        }
    }
}
