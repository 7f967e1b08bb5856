import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisTestSupport
import Testing

@Suite("Action page")
struct ActionPageTests {
    /// The path and query of a link (the tests reach the page through the router or a socket).
    static func pathAndQuery(_ link: String) throws -> String {
        guard let components = URLComponents(string: link), let query = components.percentEncodedQuery else {
            throw TestSetupError("not a link: \(link)")
        }
        return components.path + "?" + query
    }

    static func adminLink(
        _ gateway: TestGateway, tenant: String, type: String, email: String, continueURL: String? = nil
    ) async throws -> String {
        var body: [String: JSONValue] = ["requestType": .string(type), "email": .string(email), "returnOobLink": true]
        if let continueURL { body["continueUrl"] = .string(continueURL) }
        let response = try await gateway.send(
            .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:sendOobCode",
            json: JSONValue.object(body).serialized())
        guard case .string(let link)? = try response.json().value(at: ["oobLink"]) else {
            throw TestSetupError("no link: \(String(buffer: response.body))")
        }
        return link
    }

    static func form(_ fields: [String: String]) -> ByteBuffer {
        ByteBuffer(string: fields.map { "\($0.key)=\(ActionPageTests.formEncoded($0.value))" }.joined(separator: "&"))
    }

    static func formEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    @Test("a verification link verifies when opened and follows the code's continue URL")
    func verify() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true,"authorizedDomains":["app.example.com"]}"#)
            let session = try await gateway.signUp("page@example.com", tenant: tenant)
            let link = try await Self.adminLink(
                gateway, tenant: tenant, type: "VERIFY_EMAIL", email: "page@example.com", continueURL: "https://app.example.com/welcome")
            // The link's own continueUrl is ignored: the one stored with the code decides.
            let tampered = try Self.pathAndQuery(link).replacingOccurrences(of: "app.example.com", with: "evil.example")
            let opened = try await gateway.client.execute(uri: tampered, method: .get, headers: [:], body: nil)
            #expect(opened.status == .seeOther)
            #expect(opened.headers[.location] == "https://app.example.com/welcome")
            let lookup = try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: tenant)
            guard case .array(let users)? = try lookup.json().value(at: ["users"]) else {
                throw TestSetupError("lookup failed: \(String(buffer: lookup.body))")
            }
            #expect(users.first?.value(at: ["emailVerified"]) == true)
            let again = try await gateway.client.execute(uri: tampered, method: .get, headers: [:], body: nil)
            #expect(again.status == .badRequest)
            #expect(String(buffer: again.body).contains("used already"))
        }
    }

    @Test("a reset link shows a labelled form; a weak password is refused in an alert; the form sets the password")
    func reset() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("form@example.com", "old password", tenant: tenant)
            let link = try await Self.adminLink(gateway, tenant: tenant, type: "PASSWORD_RESET", email: "form@example.com")
            let page = try await gateway.client.execute(uri: try Self.pathAndQuery(link), method: .get, headers: [:], body: nil)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains(#"<label for="newPassword">"#))
            #expect(html.contains(#"autocomplete="new-password""#))
            #expect(html.contains("form@example.com"))
            #expect(!html.contains("<script"))
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            #expect(page.headers[.cacheControl] == "no-store")

            let query = try #require(URLComponents(string: link)?.queryItems)
            var fields = Dictionary(uniqueKeysWithValues: query.compactMap { item in item.value.map { (item.name, $0) } })
            fields["newPassword"] = "abc"
            let headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            let weak = try await gateway.client.execute(uri: "/__/auth/action", method: .post, headers: headers, body: Self.form(fields))
            #expect(weak.status == .badRequest)
            #expect(String(buffer: weak.body).contains(#"role="alert""#))
            fields["newPassword"] = "a new password & more"
            let done = try await gateway.client.execute(uri: "/__/auth/action", method: .post, headers: headers, body: Self.form(fields))
            #expect(done.status == .ok)
            #expect(String(buffer: done.body).contains("Your password has changed"))
            _ = try await gateway.signIn("form@example.com", "a new password & more", tenant: tenant)

            fields["apiKey"] = "not-a-key"
            let forged = try await gateway.client.execute(uri: "/__/auth/action", method: .post, headers: headers, body: Self.form(fields))
            #expect(forged.status == .badRequest)
            #expect(String(buffer: forged.body).contains("This link is not valid"))
            let garbage = try await gateway.client.execute(
                uri: "/__/auth/action?mode=resetPassword&oobCode=%00%27%22<script>&apiKey=\(TestGateway.apiKey)", method: .get,
                headers: [:], body: nil)
            #expect(garbage.status == .badRequest)
            #expect(!String(buffer: garbage.body).contains("<script>"))
        }
    }

    @Test("headless Chromium completes a reset on the page and follows the continue URL")
    func chromium() async throws {
        let python = try InteropTests.tool("PORTCULLIS_TEST_PYTHON")
        let chromium = try InteropTests.tool("PORTCULLIS_TEST_CHROMIUM")
        let driver = try InteropTests.tool("PORTCULLIS_TEST_CHROMEDRIVER")
        let script = InteropTests.packageRoot.appendingPathComponent("Tests/interop/action_page_reset.py").path
        try await TestGateway.run(live: true) { gateway in
            let port = try #require(gateway.client.port)
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            // Created by an admin without a password: nothing in this test's own requests waits on
            // the idle-priority hashing pool, which a parallel run with a browser starves past the
            // live test client's 20-second read timeout. The browser's reset sets the password.
            let created = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts", json: #"{"email":"browser@example.com"}"#)
            #expect(created.status == .ok)
            let link = try await Self.adminLink(
                gateway, tenant: tenant, type: "PASSWORD_RESET", email: "browser@example.com",
                continueURL: "http://localhost:\(port)/healthz")
            let local = "http://127.0.0.1:\(port)" + (try Self.pathAndQuery(link))
            // Without blocking a thread of the pool: the browser talks to this process's gateway.
            let (status, output) = try await ChildProcess.run(python, [script, local, "abc", "chosen in a browser", chromium, driver])
            #expect(status == 0, "\(output)")
            let summary = try JSONValue.parse(Array((output.split(separator: "\n").last.map(String.init) ?? "").utf8))
            #expect(summary.value(at: ["heading"]) == "Reset your password")
            #expect(summary.value(at: ["label"]) == "New password")
            #expect(summary.value(at: ["lang"]) == "en")
            #expect(summary.value(at: ["described_by"]) == "error")
            guard case .string(let alert)? = summary.value(at: ["alert"]) else { throw TestSetupError("no alert: \(output)") }
            #expect(alert.contains("stronger password"))
            // The page redirects only after the reset is written; no sign-in here: under the load a
            // browser adds to a parallel test run, a hash on the idle-priority pool can take longer
            // than the test client waits (the HTTP-level test above signs in with the new password).
            #expect(summary.value(at: ["final_url"]) == .string("http://localhost:\(port)/healthz"))
        }
    }
}
