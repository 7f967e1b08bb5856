import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// The conformance kit: every flow of `Tests/interop/sdk_requests/` replayed as the official
/// JS and iOS SDKs send it (paths under the emulator prefixes and v3 aliases, headers, body
/// keys, `tenantId` only where the SDK adds it), for a project user and a tenant user, and
/// every field the SDK needs checked in each answer. The data comes from the SDKs' sources,
/// not from our clients (the kit's README names the commits).
@Suite("SDK conformance kit")
struct SDKConformanceTests {
    static let directory = InteropTests.packageRoot.appendingPathComponent("Tests/interop/sdk_requests")

    /// Every flow file of the kit.
    static let flows: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }()

    /// Fields the kit lists as required that Google itself leaves out in these flows, and why.
    static let absentAsInGoogle: [String: String] = [
        "recaptchaKey": "enforcement is off for every provider: Google sends no key then (the SDK's own test fixture)",
        "mfaInfo": "no second factor is enrolled",
    ]

    @Test("the kit holds every flow the issue names")
    func kitIsComplete() {
        #expect(Self.flows.count == 27, "\(Self.flows)")
    }

    @Test("each flow, as the JS and the iOS SDK send it, for a project user and a tenant user", arguments: flows)
    func replay(flow: String) async throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent("\(flow).json"))
        let document = try JSONValue.parse(Array(data))
        try await FederationFixture.run(
            tenantSettings:
                #"{"allowPasswordSignup":true,"enableAnonymousUser":true,"emailDelivery":{"channel":"LOG"},"authorizedDomains":["app.example.com"]}"#
        ) { fixture in
            try await Self.configureProject(fixture)
            for tenant in [nil, fixture.tenant] {
                for sdk in ["js", "ios"] {
                    let steps = sdk == "js" ? document.list(at: ["steps"]) : document.list(at: ["ios", "steps"])
                    guard !steps.isEmpty else { continue }
                    var replay = try await Replay(flow: flow, sdk: sdk, tenant: tenant, fixture: fixture)
                    for step in steps where step.value(at: ["optional"]) != true {
                        try await replay.run(step)
                    }
                }
            }
        }
    }

    /// The project's own users get what the tenant has: sign-up, guests, delivery, Google.
    static func configureProject(_ fixture: FederationFixture) async throws {
        let gateway = fixture.gateway
        let config = try await gateway.send(
            .patch,
            "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup,enableAnonymousUser,emailDelivery",
            json: #"{"allowPasswordSignup":true,"enableAnonymousUser":true,"emailDelivery":{"channel":"LOG"}}"#)
        guard config.status == .ok else { throw TestSetupError("project config: \(String(buffer: config.body))") }
        let google = JSONValue.object([
            "enabled": true, "clientId": .string(fixture.idp.audience), "issuer": .string(fixture.idp.issuer),
            "jwksUri": .string(fixture.idp.jwksURL),
        ])
        let provider = try await gateway.send(
            .post, "/v2/projects/\(TestGateway.projectId)/defaultSupportedIdpConfigs?idpId=google.com", json: google.serialized())
        guard provider.status == .ok else { throw TestSetupError("project provider: \(String(buffer: provider.body))") }
    }
}

/// One flow replayed for one SDK and one kind of user: its variables, set up as the flow's
/// preconditions need, then updated from each answer as the SDK would (`sets`).
struct Replay {
    let flow: String
    let sdk: String
    let tenant: String?
    let fixture: FederationFixture
    var variables: [String: String]
    /// Whether the flow's code is an email change (its inspection then names `newEmail`).
    var changesEmail = false

    var gateway: TestGateway { fixture.gateway }
    var label: String { "\(flow) [\(sdk), \(tenant == nil ? "project user" : "tenant user")]" }

    init(flow: String, sdk: String, tenant: String?, fixture: FederationFixture) async throws {
        self.flow = flow
        self.sdk = sdk
        self.tenant = tenant
        self.fixture = fixture
        let tag = "\(flow)-\(sdk)-\(tenant == nil ? "p" : "t")".lowercased()
        variables = [
            "API_KEY": TestGateway.apiKey, "TENANT_ID": tenant ?? "", "EMAIL": "\(tag)@example.com",
            "PASSWORD": "correct horse 1", "NEW_EMAIL": "new-\(tag)@example.com", "NEW_PASSWORD": "new horse 2",
            "DISPLAY_NAME": "Ada", "PHOTO_URL": "https://example.com/ada.png", "CONTINUE_URI": "http://localhost",
            "TOKEN": "apple-access-token", "AUTHORIZATION_CODE": "apple-authorization-code", "PROVIDER_ID": "google.com",
            "IDP_ACCESS_TOKEN": "unused-access-token",
            "IDP_ID_TOKEN": fixture.idp.idToken(sub: "g-\(tag)", email: "idp-\(tag)@gmail.com"),
            "JS_CLIENT_VERSION": "Chrome/JsCore/12.18.0/FirebaseCore-web", "APP_ID": "1:123456789:web:0123456789abcdef",
            "LANGUAGE_CODE": "en", "HEARTBEAT": "heartbeat", "APP_CHECK_TOKEN": "app-check", "BUNDLE_ID": "com.example.app",
            "GTM_USER_AGENT": "gtm",
        ]
        try await prepare()
    }

    /// The state the flow assumes before its first request.
    private mutating func prepare() async throws {
        switch flow {
        case "signUp-email-password", "getProjectConfig-authorizedDomains", "initializeRecaptchaConfig", "validatePassword":
            return
        case "signInAnonymously", "signInWithCredential-idp-idtoken", "signInWithCustomToken":
            if flow == "signInWithCustomToken" {
                let signer = try await TestSigner.create(gateway, tenant: tenant)
                variables["CUSTOM_TOKEN"] = try signer.mint(
                    uid: "custom-\(sdk)-\(tenant == nil ? "p" : "t")", tenant.map { ["tenant_id": .string($0)] } ?? [:])
            }
            return
        case "linkWithCredential-email-anonymous":
            try adopt(try await gateway.endUser("accounts:signUp", ["returnSecureToken": true], tenant: tenant))
            return
        default:
            break
        }
        let email = try #require(variables["EMAIL"])
        try adopt(
            try await gateway.endUser(
                "accounts:signUp", ["email": .string(email), "password": .string(variables["PASSWORD"] ?? "")], tenant: tenant))
        switch flow {
        case "unlink":
            let linked = try await gateway.endUser(
                "accounts:signInWithIdp",
                [
                    "postBody": .string("providerId=google.com&id_token=\(variables["IDP_ID_TOKEN"] ?? "")"),
                    "requestUri": "http://localhost", "returnSecureToken": true, "idToken": .string(variables["ID_TOKEN"] ?? ""),
                ], tenant: tenant)
            try adopt(linked)
        case "applyActionCode":
            variables["OOB_CODE"] = try await code("VERIFY_EMAIL", email: email)
        case "checkActionCode":
            changesEmail = true
            variables["OOB_CODE"] = try await code("VERIFY_AND_CHANGE_EMAIL", email: email, newEmail: variables["NEW_EMAIL"])
        case "verifyPasswordResetCode", "confirmPasswordReset":
            variables["OOB_CODE"] = try await code("PASSWORD_RESET", email: email)
        default:
            break
        }
    }

    /// Takes the session of a sign-in answer made during set-up.
    private mutating func adopt(_ response: TestResponse) throws {
        let session = try Session(response.json())
        variables["ID_TOKEN"] = session.idToken
        variables["REFRESH_TOKEN"] = session.refreshToken
        variables["UID"] = session.uid
    }

    /// An action code, as the user's mailbox would receive it.
    private func code(_ type: String, email: String, newEmail: String? = nil) async throws -> String {
        var body: [String: JSONValue] = ["requestType": .string(type), "email": .string(email), "returnOobLink": true]
        if let newEmail { body["newEmail"] = .string(newEmail) }
        let path = "/v1/projects/\(TestGateway.projectId)\(tenant.map { "/tenants/\($0)" } ?? "")/accounts:sendOobCode"
        let response = try await gateway.send(.post, path, json: JSONValue.object(body).serialized())
        guard let link = try response.json().string(at: ["oobLink"]),
            let code = URLComponents(string: link)?.queryItems?.first(where: { $0.name == "oobCode" })?.value
        else { throw TestSetupError("no link: \(String(buffer: response.body))") }
        return code
    }

    /// `text` with every `$VARIABLE` replaced.
    func substituted(_ text: String) -> String {
        var result = text
        // Longest names first: $ID_TOKEN must not be read as $ID followed by _TOKEN.
        for name in variables.keys.sorted(by: { $0.count > $1.count }) {
            result = result.replacingOccurrences(of: "$" + name, with: variables[name] ?? "")
        }
        return result
    }

    /// A JSON body value with its placeholders replaced.
    func substituted(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): .string(substituted(text))
        case .array(let items): .array(items.map(substituted))
        case .object(let members): .object(members.mapValues(substituted))
        default: value
        }
    }

    /// Sends `step` as the SDK does and checks the answer; takes its `sets`.
    mutating func run(_ step: JSONValue) async throws {
        let id = step.string(at: ["id"]) ?? "?"
        let where_ = "\(label) step \(id)"
        guard let path = step.string(at: ["emulatorPath"]), let method = step.string(at: ["method"]) else {
            throw TestSetupError("\(where_): no path")
        }
        var query: [(String, String)] = []
        if case .object(let members)? = step.value(at: ["query"]) {
            for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                guard case .string(let text) = value else { continue }
                if text.hasPrefix("$TENANT_ID") {
                    if let tenant { query.append((name, tenant)) }
                } else {
                    query.append((name, substituted(text)))
                }
            }
        }
        var headers = HTTPFields()
        for key in ["headers", "conditionalHeaders"] {
            guard case .object(let members)? = step.value(at: [key]) else { continue }
            for (name, value) in members {
                guard case .string(let text) = value, let field = HTTPField.Name(name) else { continue }
                let first = String(text.split(separator: ";").first ?? "")
                headers[field] = first.contains("$") ? substituted(first) : (key == "headers" ? text : "en")
            }
        }
        var body: ByteBuffer?
        switch step.string(at: ["bodyEncoding"]) {
        case "json":
            guard case .object(var members)? = step.value(at: ["body"]).map(substituted) else {
                throw TestSetupError("\(where_): no body")
            }
            if step.value(at: ["tenantIdInBody"]) == true, let tenant { members["tenantId"] = .string(tenant) }
            body = ByteBuffer(bytes: JSONValue.object(members).serializedBytes())
        case "form":
            guard case .object(let members)? = step.value(at: ["body"]) else { throw TestSetupError("\(where_): no form") }
            body = ByteBuffer(
                string: URLEncodedForm.encode(
                    members.sorted { $0.key < $1.key }.map { ($0.key, substituted($0.value.string(at: []) ?? "")) }))
        default:
            body = nil
        }
        let uri = path + (query.isEmpty ? "" : "?" + URLEncodedForm.encode(query))
        let response = try await gateway.client.execute(
            uri: uri, method: method == "GET" ? .get : .post, headers: headers, body: body)
        #expect(response.status == .ok, "\(where_): \(String(buffer: response.body))")
        guard response.status == .ok else { return }
        let answer = try response.json()
        guard case .object(let members) = answer else {
            Issue.record("\(where_): not a JSON object")
            return
        }
        // The JS SDK treats these keys' mere presence in a success as an error.
        for key in ["needConfirmation", "errorMessage", "mfaPendingCredential"] {
            #expect(members[key] == nil, "\(where_): \(key) present")
        }
        if case .object(let required)? = step.value(at: ["required"]) {
            for field in required.keys where expected(field, in: answer) {
                #expect(Self.present(field, in: answer), "\(where_): \(field) missing from \(answer.serialized())")
            }
        }
        Self.checkTypes(answer, where_)
        if case .object(let sets)? = step.value(at: ["sets"]) {
            for (name, source) in sets {
                guard case .string(let text) = source, let field = text.split(separator: " ").first,
                    let value = Self.value(String(field), in: answer)
                else { continue }
                variables[name] = value
            }
        }
    }

    /// Whether Google would send `field` in this answer (see ``SDKConformanceTests/absentAsInGoogle``).
    func expected(_ field: String, in answer: JSONValue) -> Bool {
        if SDKConformanceTests.absentAsInGoogle[field] != nil { return false }
        // Read for their presence, which must mean what it says (checked above).
        if ["needConfirmation", "errorMessage", "mfaPendingCredential"].contains(field) { return false }
        // The placeholder stands for a password: only accounts with one show it.
        if field == "users[0].passwordHash" {
            return Self.lookup("users[0].providerUserInfo[].providerId", in: answer).contains(.string("password"))
        }
        if field == "newEmail" { return changesEmail }
        // A profile change revokes nothing, so it issues no tokens: the SDK needs a refresh
        // token only beside a new ID token.
        if ["refreshToken", "expiresIn"].contains(field) { return answer.value(at: ["idToken"]) != nil || !isUpdate(answer) }
        return true
    }

    /// Whether `answer` is `accounts:update`'s.
    private func isUpdate(_ answer: JSONValue) -> Bool {
        answer.value(at: ["kind"]) == "identitytoolkit#SetAccountInfoResponse"
    }

    /// The value at a kit path such as `users[0].localId` or `customStrengthOptions.minPasswordLength`.
    static func lookup(_ path: String, in value: JSONValue) -> [JSONValue] {
        var current = [value]
        for part in path.split(separator: ".") {
            var name = String(part)
            var each = false
            var index: Int?
            if name.hasSuffix("[]") {
                each = true
                name.removeLast(2)
            } else if let open = name.firstIndex(of: "["), name.hasSuffix("]") {
                index = Int(name[name.index(after: open)..<name.index(before: name.endIndex)])
                name = String(name[..<open])
            }
            current = current.flatMap { node -> [JSONValue] in
                guard let child = node.value(at: [name]) else { return [] }
                if each { return child.list(at: []) }
                if let index { return child.list(at: []).indices.contains(index) ? [child.list(at: [])[index]] : [] }
                return [child]
            }
        }
        return current
    }

    /// Whether `path` is in `value`; for `list[].field`, whether the list is, and each item has the field.
    static func present(_ path: String, in value: JSONValue) -> Bool {
        if let range = path.range(of: "[]."), !path[range.upperBound...].contains("[") {
            let list = String(path[..<range.lowerBound]) + "[]"
            let items = lookup(list, in: value)
            return present(String(path[..<range.lowerBound]), in: value)
                && items.allSatisfy { $0.value(at: [String(path[range.upperBound...])]) != nil }
        }
        return !lookup(path, in: value).isEmpty
    }

    static func value(_ path: String, in answer: JSONValue) -> String? {
        lookup(path, in: answer).first.flatMap { $0.string(at: []) }
    }

    /// Google's types for the fields the SDKs parse strictly: int64 values as strings (iOS
    /// ignores numbers), the lookup's times as strings (the JS SDK's persistence asserts it).
    static func checkTypes(_ answer: JSONValue, _ where_: String) {
        for path in ["expiresIn", "expires_in", "users[0].createdAt", "users[0].lastLoginAt", "users[0].validSince"] {
            for value in lookup(path, in: answer) {
                guard case .string(let text) = value, Int64(text) != nil else {
                    Issue.record("\(where_): \(path) is not an int64 string: \(value.serialized())")
                    continue
                }
            }
        }
        for path in ["schemaVersion", "users[0].passwordUpdatedAt"] {
            for value in lookup(path, in: answer) {
                guard case .integer = value else {
                    Issue.record("\(where_): \(path) is not a number: \(value.serialized())")
                    continue
                }
            }
        }
    }
}
