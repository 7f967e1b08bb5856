import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
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

    /// The hidden fields of the page's form, as a browser would post them.
    static func hiddenFields(_ html: String) throws -> [String: String] {
        let pattern = try Regex(#"<input type="hidden" name="([^"]+)" value="([^"]*)">"#)
        var fields: [String: String] = [:]
        for match in html.matches(of: pattern) {
            guard let name = match.output[1].substring, let value = match.output[2].substring else { continue }
            fields[String(name)] = String(value).replacingOccurrences(of: "&quot;", with: "\"")
                .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        }
        return fields
    }

    static let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    @Test("a verification link opened shows one button and applies nothing; its form verifies and follows the continue URL")
    func verify() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true,"authorizedDomains":["app.example.com"]}"#)
            let session = try await gateway.signUp("page@example.com", tenant: tenant)
            let link = try await Self.adminLink(
                gateway, tenant: tenant, type: "VERIFY_EMAIL", email: "page@example.com", continueURL: "https://app.example.com/welcome")
            func verified() async throws -> JSONValue? {
                let lookup = try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: tenant)
                guard case .array(let users)? = try lookup.json().value(at: ["users"]) else {
                    throw TestSetupError("lookup failed: \(String(buffer: lookup.body))")
                }
                return users.first?.value(at: ["emailVerified"])
            }
            // The link's own continueUrl is ignored: the one stored with the code decides.
            let tampered = try Self.pathAndQuery(link).replacingOccurrences(of: "app.example.com", with: "evil.example")
            // A mail scanner fetching the link, twice, changes nothing.
            for _ in 0..<2 {
                let opened = try await gateway.client.execute(uri: tampered, method: .get, headers: [:], body: nil)
                #expect(opened.status == .ok)
                #expect(String(buffer: opened.body).contains("page@example.com"))
                #expect(String(buffer: opened.body).contains(#"<button type="submit">Verify my email</button>"#))
            }
            #expect(try await verified() == false)
            let opened = try await gateway.client.execute(uri: tampered, method: .get, headers: [:], body: nil)
            var fields = try Self.hiddenFields(String(buffer: opened.body))
            // Without the page's token, or with another's, the form applies nothing.
            let token = fields.removeValue(forKey: "token")
            for forged in [nil, "AAAA", String((token ?? "").reversed())] {
                var attempt = fields
                attempt["token"] = forged
                let refused = try await gateway.client.execute(
                    uri: "/__/auth/action", method: .post, headers: Self.formHeaders, body: Self.form(attempt))
                #expect(refused.status == .badRequest)
            }
            #expect(try await verified() == false)
            fields["token"] = token
            let applied = try await gateway.client.execute(
                uri: "/__/auth/action", method: .post, headers: Self.formHeaders, body: Self.form(fields))
            #expect(applied.status == .seeOther)
            #expect(applied.headers[.location] == "https://app.example.com/welcome")
            #expect(try await verified() == true)
            let again = try await gateway.client.execute(
                uri: "/__/auth/action", method: .post, headers: Self.formHeaders, body: Self.form(fields))
            #expect(again.status == .badRequest)
            #expect(String(buffer: again.body).contains("used already"))
            #expect(String(buffer: again.body).contains(#"role="alert""#))
        }
    }

    @Test(
        "continue URLs are read as browsers read them: backslash, userinfo, encoded and IDNA forms; only the checked form is written back")
    func continueURLForms() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(
                #"{"allowPasswordSignup":true,"authorizedDomains":["app.example.com","xn--bcher-kva.example"]}"#)
            _ = try await gateway.signUp("url@example.com", tenant: tenant)
            let path = "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:sendOobCode"
            func issue(_ url: String) async throws -> TestResponse {
                try await gateway.send(
                    .post, path,
                    json: JSONValue.object([
                        "requestType": "VERIFY_EMAIL", "email": "url@example.com", "returnOobLink": true, "continueUrl": .string(url),
                    ]).serialized())
            }
            for refused in [
                #"https://attacker.example\@localhost/after"#, "https://attacker.example\\@app.example.com/",
                "https://user:pw@app.example.com/", "https://app.example.com@attacker.example/", #"https:\\attacker.example/x"#,
                "https://%61ttacker.example/", "https://app.example.com.attacker.example/", "javascript:alert(1)",
            ] {
                let answer = try await issue(refused)
                #expect(answer.status == .badRequest, "\(refused): \(String(buffer: answer.body))")
                #expect(["INVALID_CONTINUE_URI", "UNAUTHORIZED_DOMAIN"].contains { answer.errorMessage?.hasPrefix($0) == true })
            }
            for (given, stored) in [
                ("https://APP.Example.COM/a/./b/../c?q=1#f", "https://app.example.com/a/c?q=1#f"),
                ("https://%41pp.example.com/x", "https://app.example.com/x"),
                ("https://bücher.example/y", "https://xn--bcher-kva.example/y"),
                (" https://app.exa\tmple.com:443/z ", "https://app.example.com/z"),
            ] {
                let answer = try await issue(given)
                #expect(answer.status == .ok, "\(given): \(String(buffer: answer.body))")
                guard case .string(let link)? = try answer.json().value(at: ["oobLink"]) else { continue }
                let continueURL = URLComponents(string: link)?.queryItems?.first { $0.name == "continueUrl" }?.value
                #expect(continueURL == stored, "\(given)")
                let opened = try await gateway.client.execute(uri: try Self.pathAndQuery(link), method: .get, headers: [:], body: nil)
                let applied = try await gateway.client.execute(
                    uri: "/__/auth/action", method: .post, headers: Self.formHeaders,
                    body: Self.form(try Self.hiddenFields(String(buffer: opened.body))))
                if given == "https://APP.Example.COM/a/./b/../c?q=1#f" {
                    #expect(applied.status == .seeOther)
                    #expect(applied.headers[.location] == stored)
                }
            }
        }
    }

    @Test("no mode applies anything on GET: an email change and a reset opened stay unapplied")
    func getAppliesNothing() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("still@example.com", "old password", tenant: tenant)
            let change = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:sendOobCode",
                json:
                    #"{"requestType":"VERIFY_AND_CHANGE_EMAIL","email":"still@example.com","newEmail":"moved@example.com","returnOobLink":true}"#
            )
            guard case .string(let changeLink)? = try change.json().value(at: ["oobLink"]) else {
                throw TestSetupError("no link: \(String(buffer: change.body))")
            }
            let reset = try await Self.adminLink(gateway, tenant: tenant, type: "PASSWORD_RESET", email: "still@example.com")
            for link in [changeLink, reset] {
                for _ in 0..<2 {
                    let opened = try await gateway.client.execute(uri: try Self.pathAndQuery(link), method: .get, headers: [:], body: nil)
                    #expect(opened.status == .ok)
                }
            }
            // The account keeps its address and its password.
            _ = try await gateway.signIn("still@example.com", "old password", tenant: tenant)
            let opened = try await gateway.client.execute(uri: try Self.pathAndQuery(changeLink), method: .get, headers: [:], body: nil)
            #expect(String(buffer: opened.body).contains("moved@example.com"))
            let applied = try await gateway.client.execute(
                uri: "/__/auth/action", method: .post, headers: Self.formHeaders,
                body: Self.form(try Self.hiddenFields(String(buffer: opened.body))))
            #expect(applied.status == .ok)
            #expect(String(buffer: applied.body).contains("Your email has changed"))
            _ = try await gateway.signIn("moved@example.com", "old password", tenant: tenant)
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

            var fields = try Self.hiddenFields(html)
            #expect(fields["token"] != nil)
            fields["newPassword"] = "abc"
            let headers = Self.formHeaders
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
