import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

/// A real gateway on a fresh database, driven through Hummingbird's router test client.
struct TestGateway {
    static let projectId = "test-project"

    let server: PortcullisServer
    let client: any TestClientProtocol
    /// A project-scope admin key's secret.
    let projectKey: String

    static let apiKey = "test-api-key"
    /// One master key for the test process, so instances on one database open each other's keys.
    static let masterKey = MasterKey.generate()

    static func make(
        settings: DatabaseSettings, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws -> PortcullisServer {
        var configuration = ServerConfiguration(
            projectId: projectId, publicURL: "http://localhost", database: settings,
            apiKeys: [apiKey], cacheRefreshInterval: .seconds(3600), masterKey: masterKey,
            passwordHashing: .init(logN: 10, r: 8, p: 1), clock: SystemClock())
        // The suite's own load (a dozen tests on two cores) is no database fault: 503s are for
        // the tests that make one, which set their own timeout.
        configuration.database.requestTimeout = .seconds(30)
        // Each test's gateway would make a dozen keys ahead (RSA among them) that few tests use:
        // keys are made on demand here (`SigningKeyPoolTests` covers the pool).
        configuration.signingKeyPoolSize = 0
        configure(&configuration)
        return try PortcullisServer(configuration: configuration, logger: TestDatabase.logger)
    }

    /// Runs `body` against a gateway on a new database, through the router, or with
    /// `live`, through a real socket on a free port.
    static func run(
        live: Bool = false, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestGateway) async throws -> Void
    ) async throws {
        let server = try make(settings: try await TestDatabase.create()) {
            if live { $0.port = 0 }
            configure(&$0)
        }
        try await server.application.test(live ? .live : .router) { client in
            let (_, secret) = try await server.services.adminKeys.create(displayName: "test", scope: .project, actor: "test")
            try await body(TestGateway(server: server, client: client, projectKey: secret))
        }
    }

    /// A new admin key for `scope`.
    func key(_ scope: AdminScope) async throws -> String {
        try await server.services.adminKeys.create(displayName: "k", scope: scope, actor: "test").secret
    }

    /// Sends a request with the project key unless `key` says otherwise (`.some(nil)` = no header).
    @discardableResult
    func send(
        _ method: HTTPRequest.Method, _ path: String, json: String? = nil, bytes: [UInt8]? = nil, key: String?? = .none
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let key = key ?? projectKey { headers[.authorization] = "Bearer \(key)" }
        let body = bytes.map { ByteBuffer(bytes: $0) } ?? json.map { ByteBuffer(string: $0) }
        return try await client.execute(uri: path, method: method, headers: headers, body: body)
    }

    /// Creates a tenant and returns its id.
    func createTenant(_ json: String = #"{"displayName":"t"}"#) async throws -> String {
        let response = try await send(.post, "/v2/projects/\(Self.projectId)/tenants", json: json)
        #expect(response.status == .ok)
        let name = try response.json().value(at: ["name"])
        guard case .string(let text)? = name, let id = text.split(separator: "/").last else {
            throw TestSetupError("tenant create returned no name: \(String(buffer: response.body))")
        }
        return String(id)
    }

    var tenants: String { "/v2/projects/\(Self.projectId)/tenants" }
}

extension TestResponse {
    func json() throws -> JSONValue { try JSONValue.parse(Array(body.readableBytesView)) }

    /// The envelope's message, or nil when this is not an error envelope.
    var errorMessage: String? {
        guard case .string(let message)? = try? json().value(at: ["error", "message"]) else { return nil }
        return message
    }

    /// Checks the envelope's shape: code equals the HTTP status, errors[0] repeats the message.
    func expectEnvelope(_ status: HTTPResponse.Status, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(String(buffer: body))", sourceLocation: sourceLocation)
        let json = try? self.json()
        #expect(json?.value(at: ["error", "code"]) == .integer(Int64(status.code)), sourceLocation: sourceLocation)
        #expect(errorMessage?.hasPrefix(message) == true, "\(errorMessage ?? "no envelope")", sourceLocation: sourceLocation)
        if case .array(let errors)? = json?.value(at: ["error", "errors"]), let first = errors.first {
            #expect(first.value(at: ["message"]) == .string(errorMessage ?? ""), sourceLocation: sourceLocation)
            #expect(first.value(at: ["domain"]) == .string("global"), sourceLocation: sourceLocation)
        } else {
            Issue.record("envelope without errors[]", sourceLocation: sourceLocation)
        }
    }
}

extension TestGateway {
    /// `POST /v1/<method>?key=…` with a JSON body.
    @discardableResult
    func endUser(
        _ method: String, _ body: [String: JSONValue], tenant: String? = nil, key: String? = TestGateway.apiKey
    ) async throws -> TestResponse {
        var members = body
        if let tenant { members["tenantId"] = .string(tenant) }
        let query = key.map { "?key=\($0)" } ?? ""
        return try await client.execute(
            uri: "/v1/\(method)\(query)", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: JSONValue.object(members).serialized()))
    }

    /// Signs up with email and password and returns the session.
    func signUp(_ email: String, _ password: String = "correct horse", tenant: String? = nil) async throws -> Session {
        let response = try await endUser("accounts:signUp", ["email": .string(email), "password": .string(password)], tenant: tenant)
        guard response.status == .ok else { throw TestSetupError("signUp failed: \(String(buffer: response.body))") }
        return try Session(response.json())
    }

    /// Signs in with email and password.
    func signIn(_ email: String, _ password: String = "correct horse", tenant: String? = nil) async throws -> Session {
        let response = try await endUser(
            "accounts:signInWithPassword", ["email": .string(email), "password": .string(password)], tenant: tenant)
        guard response.status == .ok else { throw TestSetupError("signIn failed: \(String(buffer: response.body))") }
        return try Session(response.json())
    }

    /// `POST /v1/token` with a refresh token (JSON).
    func refresh(_ token: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/token?key=\(TestGateway.apiKey)", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(
                string: JSONValue.object(["grant_type": .string("refresh_token"), "refresh_token": .string(token)]).serialized()))
    }

    /// PATCHes a tenant with a mask.
    func patchTenant(_ id: String, mask: String, _ json: String) async throws {
        let response = try await send(.patch, "\(tenants)/\(id)?updateMask=\(mask)", json: json)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
    }
}

/// Tokens and uid from a sign-up or sign-in answer.
struct Session {
    let uid: String
    let idToken: String
    let refreshToken: String

    init(_ json: JSONValue) throws {
        guard case .string(let uid)? = json.value(at: ["localId"]), case .string(let id)? = json.value(at: ["idToken"]),
            case .string(let refresh)? = json.value(at: ["refreshToken"])
        else { throw TestSetupError("no tokens in \(json.serialized())") }
        self.uid = uid
        idToken = id
        refreshToken = refresh
    }

    /// The token's payload, decoded without verification.
    var claims: JSONValue {
        let part = String(idToken.split(separator: ".")[1])
        return (try? JSONValue.parse(Base64URL.decode(part) ?? [])) ?? .null
    }
}
