import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@Suite("Bad input on admin routes")
struct BadInputTests {
    static let malformed: [(String, [UInt8])] = [
        ("malformed JSON", Array(#"{"displayName": "#.utf8)),
        ("not an object", Array("[1,2,3]".utf8)),
        ("a bare string", Array(#""hello""#.utf8)),
        (
            "invalid UTF-8",
            [0x7B, 0x22, 0x64, 0x69, 0x73, 0x70, 0x6C, 0x61, 0x79, 0x4E, 0x61, 0x6D, 0x65, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]
        ),
        ("wrong types", Array(#"{"displayName": {"a": 1}, "allowPasswordSignup": [true], "client": 7}"#.utf8)),
        ("wrong nested type", Array(#"{"client": {"permissions": {"disabledUserSignup": "perhaps"}}}"#.utf8)),
        ("NUL character", Array(#"{"displayName": "a\u0000b"}"#.utf8)),
        ("deep nesting", Array((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8)),
        ("huge number", Array(#"{"idTokenLifetimeSeconds": 1e400}"#.utf8)),
    ]

    @Test("malformed JSON, wrong types, invalid UTF-8, NUL, nesting: 400 INVALID_ARGUMENT on every body route")
    func malformedBodies() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let project = "/v2/projects/\(TestGateway.projectId)"
            let routes: [(HTTPRequest.Method, String)] = [
                (.post, gateway.tenants), (.patch, "\(gateway.tenants)/\(tenant)"),
                (.patch, "\(gateway.tenants)/\(tenant)?updateMask=client.permissions"),
                (.patch, "\(project)/config"), (.patch, "/admin\(project)/config"), (.post, "\(project)/adminKeys"),
            ]
            for (method, path) in routes {
                for (name, bytes) in Self.malformed {
                    let response = try await gateway.send(method, path, bytes: bytes)
                    #expect(response.status == .badRequest, "\(method) \(path) with \(name): \(response.status)")
                    #expect(response.errorMessage?.hasPrefix("INVALID_ARGUMENT") == true, "\(method) \(path) with \(name)")
                }
            }
            // Nothing was created or changed by any of it.
            let list = try await gateway.send(.get, gateway.tenants).json()
            guard case .array(let tenants)? = list.value(at: ["tenants"]) else { throw TestSetupError("no list") }
            #expect(tenants.count == 1)
            #expect(try await gateway.send(.get, "/healthz").status == .ok)
        }
    }

    @Test("2 MiB bodies are 413 with the envelope on every body route, and the server keeps serving")
    func hugeBodies() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let project = "/v2/projects/\(TestGateway.projectId)"
            let huge = Array(#"{"displayName":""#.utf8) + [UInt8](repeating: 0x61, count: 2 << 20) + Array(#""}"#.utf8)
            for (method, path) in [
                (HTTPRequest.Method.post, gateway.tenants), (.patch, "\(gateway.tenants)/\(tenant)"),
                (.patch, "\(project)/config"), (.post, "\(project)/adminKeys"),
            ] {
                try await gateway.send(method, path, bytes: huge).expectEnvelope(.contentTooLarge, "PAYLOAD_TOO_LARGE")
            }
            #expect(try await gateway.send(.get, "\(gateway.tenants)/\(tenant)").status == .ok)
        }
    }

    @Test("SQL metacharacters are data, path ids that cannot exist are 404")
    func metacharacters() async throws {
        try await TestGateway.run { gateway in
            let name = #"x'; DROP TABLE tenants; -- "\ %_"#
            let body = JSONValue.object(["displayName": .string(name)]).serialized()
            let id = try await gateway.createTenant(body)
            #expect(try await gateway.send(.get, "\(gateway.tenants)/\(id)").json().value(at: ["displayName"]) == .string(name))
            for bad in ["x'%20OR%20'1'='1", "%27%3B", "a%00b", String(repeating: "a", count: 300), "..%2F.."] {
                try await gateway.send(.get, "\(gateway.tenants)/\(bad)").expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            }
            try await gateway.send(.delete, "/v2/projects/\(TestGateway.projectId)/adminKeys/'or'1'='1")
                .expectEnvelope(.notFound, "ADMIN_KEY_NOT_FOUND")
            try await gateway.send(.get, "/v2/projects/\(TestGateway.projectId)/auditEvents?pageToken=';--")
                .expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            #expect(try await gateway.send(.get, gateway.tenants).status == .ok)
        }
    }
}

@Suite("Health, metrics and unknown routes")
struct OperationsTests {
    @Test("healthz, readyz and Prometheus metrics by route template")
    func health() async throws {
        try await TestGateway.run { gateway in
            #expect(try await gateway.send(.get, "/healthz", key: .some(nil)).status == .ok)
            #expect(try await gateway.send(.get, "/readyz", key: .some(nil)).status == .ok)
            _ = try await gateway.createTenant()
            try await gateway.send(.get, "/nowhere", key: .some(nil)).expectEnvelope(.notFound, "NOT_FOUND")
            try await gateway.send(.put, gateway.tenants).expectEnvelope(.notFound, "NOT_FOUND")
            let metrics = String(buffer: try await gateway.send(.get, "/metrics", key: .some(nil)).body)
            #expect(
                metrics.contains(#"portcullis_http_requests_total{route="/v2/projects/{project}/tenants",method="POST",status="200"} 1"#),
                "\(metrics)")
            #expect(metrics.contains(#"status="404""#))
            #expect(metrics.contains("portcullis_http_request_duration_seconds_bucket"))
            #expect(metrics.contains("portcullis_db_pool_max_connections \(gateway.server.database.settings.maximumConnections)"))
            #expect(!metrics.contains(gateway.projectKey))
        }
    }

    @Test(
        "sign-ins are counted by provider and tenant, successful requests by tenant (never a made-up one), and password hashing's latency is a histogram"
    )
    func signInsAndHashLatency() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            _ = try await gateway.signUp("counted@example.com", tenant: tenant)
            let session = try await gateway.signIn("counted@example.com", tenant: tenant)
            #expect(try await gateway.refresh(session.refreshToken).status == .ok)
            #expect(try await gateway.send(.get, "/v1/verify", key: session.idToken).status == .ok)
            #expect(try await gateway.send(.get, "\(gateway.tenants)/\(tenant)").status == .ok)
            try await gateway.endUser("accounts:signUp", [:], tenant: "made-up-tenant").expectEnvelope(.badRequest, "TENANT_NOT_FOUND")
            #expect(try await gateway.endUser("accounts:signUp", [:], tenant: tenant).status == .ok)
            // A wrong password is hashed too, but starts no session.
            #expect(
                try await gateway.endUser(
                    "accounts:signInWithPassword", ["email": "counted@example.com", "password": "wrong horse"], tenant: tenant
                ).errorMessage == "INVALID_PASSWORD")
            let metrics = String(buffer: try await gateway.send(.get, "/metrics", key: .some(nil)).body)
            #expect(metrics.contains(#"portcullis_sign_ins_total{provider="password",tenant="\#(tenant)"} 2"#), "\(metrics)")
            #expect(metrics.contains(#"portcullis_sign_ins_total{provider="anonymous",tenant="\#(tenant)"} 1"#), "\(metrics)")
            #expect(metrics.contains("portcullis_password_hash_duration_seconds_count 3"), "\(metrics)")
            // Sign-up, sign-in, refresh, verify, the admin's read, the guest's sign-up: not the wrong password.
            #expect(metrics.contains(#"portcullis_tenant_requests_total{tenant="\#(tenant)"} 6"#), "\(metrics)")
            #expect(!metrics.contains("made-up-tenant"))
            #expect(metrics.contains("portcullis_password_hash_duration_seconds_bucket"))
        }
    }
}

@Suite("Bad input on end-user routes")
struct EndUserBadInputTests {
    @Test("malformed, oversized and mistyped bodies are 4xx envelopes on every end-user route, and secrets are not echoed")
    func endUserRoutes() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"bad","allowPasswordSignup":true}"#)
            let methods = [
                "accounts:signUp", "accounts:signInWithPassword", "accounts:lookup", "accounts:update", "accounts:delete",
                "accounts:createAuthUri", "token",
            ]
            let huge = [UInt8](repeating: 0x20, count: 2 << 20)
            let bodies: [[UInt8]] =
                BadInputTests.malformed.map(\.1) + [
                    huge,
                    Array(#"{"email": {"x": 1}, "password": ["secret-password-123"], "tenantId": "\#(tenant)"}"#.utf8),
                    Array(#"{"email": "a@b.com", "password": "secret-password-123", "tenantId": 42}"#.utf8),
                ]
            for method in methods {
                for body in bodies {
                    let response = try await gateway.client.execute(
                        uri: "/v1/\(method)?key=\(TestGateway.apiKey)", method: .post,
                        headers: [.contentType: "application/json"], body: ByteBuffer(bytes: body))
                    #expect((400..<500).contains(response.status.code), "\(method): \(response.status)")
                    #expect(response.errorMessage != nil, "\(method): no envelope")
                    #expect(!String(buffer: response.body).contains("secret-password-123"))
                }
            }
            #expect(try await gateway.send(.get, "/healthz").status == .ok)
        }
    }
}
