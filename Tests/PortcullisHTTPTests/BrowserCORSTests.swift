import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import Testing

@testable import PortcullisHTTP

/// Cross-origin access: the end-user API and the key documents answer any origin, the admin and
/// operational paths none (`BrowserCORSMiddleware`).
@Suite("Browser CORS")
struct BrowserCORSTests {
    static let origin = "https://app.example.com"
    static let project = TestGateway.projectId

    @Test(
        "which paths a page on another origin may call",
        arguments: [
            ("/v1/accounts:signUp", true), ("/v1/accounts:signInWithIdp", true), ("/v1/token", true),
            ("/v1/projects", true), ("/v1/projects/p/jwks", true), ("/v1/projects/p/tenants/t-1/jwks", true),
            ("/p/.well-known/openid-configuration", true), ("/p/tenants/t-1/.well-known/openid-configuration", true),
            ("/v1/verify", false), ("/v1/", false), ("/v1/projects/p/accounts:lookup", false),
            ("/v1/projects/p/tenants/t-1/accounts", false), ("/v2/projects/p/tenants", false),
            ("/admin/v2/projects/p/config", false), ("/v2/projects/p/keys", false), ("/metrics", false),
            ("/healthz", false), ("/__/auth/action", false),
        ])
    func paths(path: String, served: Bool) {
        #expect(BrowserCORSMiddleware.servesBrowsers(path: path) == served)
    }

    /// A preflight as Chromium sends it for Firebase's web SDK: no API-key header, the SDK's own headers requested.
    func preflight(_ gateway: TestGateway, _ uri: String) async throws -> TestResponse {
        try await gateway.client.execute(
            uri: uri, method: .options,
            headers: [
                .origin: Self.origin, .accessControlRequestMethod: "POST",
                .accessControlRequestHeaders: "content-type,x-client-version,x-firebase-gmpid,x-firebase-client",
            ], body: nil)
    }

    @Test("a preflight for the end-user API is answered for any origin, without the API key, under every alias")
    func preflights() async throws {
        try await TestGateway.run { gateway in
            for uri in [
                "/v1/accounts:signUp?key=\(TestGateway.apiKey)", "/v1/accounts:signInWithPassword",
                "/identitytoolkit.googleapis.com/v1/accounts:lookup?key=\(TestGateway.apiKey)",
                "/securetoken.googleapis.com/v1/token?key=\(TestGateway.apiKey)",
                "/www.googleapis.com/identitytoolkit/v3/relyingparty/signupNewUser?key=\(TestGateway.apiKey)",
            ] {
                let response = try await preflight(gateway, uri)
                #expect(response.status == .noContent, "\(uri): \(String(buffer: response.body))")
                #expect(response.headers[.accessControlAllowOrigin] == Self.origin, "\(uri)")
                #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true, "\(uri)")
                let allowed = Set(
                    (response.headers[.accessControlAllowHeaders] ?? "").lowercased().split(separator: ",").map {
                        $0.trimmingCharacters(in: .whitespaces)
                    })
                #expect(allowed.isSuperset(of: ["content-type", "x-client-version", "x-firebase-gmpid", "x-firebase-client"]))
                #expect(response.headers[.accessControlMaxAge] == "7200")
                #expect(response.headers[.accessControlAllowCredentials] == nil, "no credentials, ever")
                #expect(response.headers[values: .vary].contains("Origin"))
            }
        }
    }

    @Test("answers and error envelopes name the origin, so a web app reads the code")
    func answersAndErrors() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let headers: HTTPFields = [.origin: Self.origin, .contentType: "application/json"]
            let body = #"{"email":"cors@example.com","password":"correct horse","tenantId":"\#(tenant)"}"#
            let signUp = "/v1/accounts:signUp?key=\(TestGateway.apiKey)"
            let created = try await gateway.client.execute(
                uri: signUp, method: .post, headers: headers, body: ByteBuffer(string: body))
            #expect(created.status == .ok)
            #expect(created.headers[.accessControlAllowOrigin] == Self.origin)
            #expect(created.headers[.accessControlAllowCredentials] == nil)

            let again = try await gateway.client.execute(uri: signUp, method: .post, headers: headers, body: ByteBuffer(string: body))
            again.expectEnvelope(.badRequest, "EMAIL_EXISTS")
            #expect(again.headers[.accessControlAllowOrigin] == Self.origin)

            let badKey = try await gateway.client.execute(
                uri: "/v1/accounts:signUp?key=not-a-key", method: .post, headers: headers, body: ByteBuffer(string: body))
            #expect(badKey.status == .badRequest)
            #expect(badKey.errorMessage?.hasPrefix("API key not valid") == true)
            #expect(badKey.headers[.accessControlAllowOrigin] == Self.origin)

            let refresh = try await gateway.client.execute(
                uri: "/v1/token?key=\(TestGateway.apiKey)", method: .post,
                headers: [.origin: Self.origin, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "grant_type=refresh_token&refresh_token=forged"))
            refresh.expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            #expect(refresh.headers[.accessControlAllowOrigin] == Self.origin)

            // Refused from the head alone, before any route reads the body: readable all the same.
            let huge = ByteBuffer(repeating: UInt8(ascii: "a"), count: 2 << 20)
            let tooLarge = try await gateway.client.execute(
                uri: signUp, method: .post, headers: headers + [.contentLength: "\(huge.readableBytes)"], body: huge)
            tooLarge.expectEnvelope(.contentTooLarge, "PAYLOAD_TOO_LARGE")
            #expect(tooLarge.headers[.accessControlAllowOrigin] == Self.origin)

            for uri in ["/v1/projects/\(Self.project)/jwks", "/\(Self.project)/.well-known/openid-configuration"] {
                let document = try await gateway.client.execute(uri: uri, method: .get, headers: [.origin: Self.origin], body: nil)
                #expect(document.status == .ok, "\(uri)")
                #expect(document.headers[.accessControlAllowOrigin] == Self.origin, "\(uri)")
            }

            // Without an Origin (servers, SDKs, proxies) nothing is added.
            let plain = try await gateway.endUser(
                "accounts:signUp", ["email": "plain@example.com", "password": "correct horse"], tenant: tenant)
            #expect(plain.status == .ok)
            #expect(plain.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test("admin, forward-auth and operational paths give a page on another origin nothing")
    func adminPathsStayClosed() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("closed@example.com", tenant: tenant)
            let admin = ["/v2/projects/\(Self.project)/tenants", "/v1/projects/\(Self.project)/accounts:lookup"]
            for uri in admin + ["/v1/verify", "/metrics"] {
                let response = try await preflight(gateway, uri)
                #expect(response.status != .noContent, "\(uri)")
                #expect(response.headers[.accessControlAllowOrigin] == nil, "\(uri)")
                #expect(response.headers[.accessControlAllowMethods] == nil, "\(uri)")
            }
            // The real requests succeed (an admin key, a token) yet carry no CORS header: a
            // browser keeps their answers from the page.
            let tenants = try await gateway.client.execute(
                uri: admin[0], method: .get, headers: [.origin: Self.origin, .authorization: "Bearer \(gateway.projectKey)"],
                body: nil)
            #expect(tenants.status == .ok)
            #expect(tenants.headers[.accessControlAllowOrigin] == nil)
            let lookup = try await gateway.client.execute(
                uri: "/v1/projects/\(Self.project)/tenants/\(tenant)/accounts:lookup", method: .post,
                headers: [.origin: Self.origin, .authorization: "Bearer \(gateway.projectKey)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"localId":["\#(session.uid)"]}"#))
            #expect(lookup.status == .ok)
            #expect(lookup.headers[.accessControlAllowOrigin] == nil)
            let verify = try await gateway.client.execute(
                uri: "/v1/verify", method: .get, headers: [.origin: Self.origin, .authorization: "Bearer \(session.idToken)"],
                body: nil)
            #expect(verify.status == .ok)
            #expect(verify.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test("headless Chromium on another origin signs up, reads an error, refreshes; an admin answer stays hidden")
    func chromium() async throws {
        let python = try InteropTests.tool("PORTCULLIS_TEST_PYTHON")
        let chromium = try InteropTests.tool("PORTCULLIS_TEST_CHROMIUM")
        let driver = try InteropTests.tool("PORTCULLIS_TEST_CHROMEDRIVER")
        let script = InteropTests.packageRoot.appendingPathComponent("Tests/interop/browser_cross_origin.py").path
        try await TestGateway.run(live: true) { gateway in
            let port = try #require(gateway.client.port)
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let (status, output) = try await ChildProcess.run(
                python,
                [script, "http://127.0.0.1:\(port)", TestGateway.apiKey, Self.project, tenant, gateway.projectKey, chromium, driver])
            #expect(status == 0, "\(output)")
            let summary = try JSONValue.parse(Array((output.split(separator: "\n").last.map(String.init) ?? "").utf8))
            #expect(summary.value(at: ["sign_up", "status"]) == .integer(200), "\(output)")
            #expect(summary.value(at: ["sign_up", "has_token"]) == .bool(true))
            #expect(summary.value(at: ["again", "status"]) == .integer(400))
            #expect(summary.value(at: ["again", "message"]) == .string("EMAIL_EXISTS"))
            #expect(summary.value(at: ["refresh", "status"]) == .integer(200))
            #expect(summary.value(at: ["refresh", "has_token"]) == .bool(true))
            // The page held a valid admin key, and the browser still kept the answer from it.
            #expect(summary.value(at: ["admin", "blocked"]) == .bool(true), "\(output)")
        }
    }
}
