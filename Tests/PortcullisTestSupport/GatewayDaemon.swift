public import Foundation
import PortcullisStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The real `portcullis serve` on a fresh database and a free loopback port, for tests of
/// what talks to the gateway over HTTP only (the client SDK, the backend verifier).
///
/// ```swift
/// try await GatewayDaemon.run { gateway in
///     let tenant = try await gateway.createTenant(#"{"displayName":"t","allowPasswordSignup":true}"#)
///     …
/// }
/// ```
public struct GatewayDaemon: Sendable {
    /// The project of every path and of the tokens' `aud`.
    public static let projectId = "client-project"
    /// The end-user API key the daemon accepts.
    public static let apiKey = "client-test-api-key"
    /// The daemon's `public_url`: the prefix of every issuer (not where it listens).
    public static let publicURL = "https://auth.portcullis.test"

    /// Where the daemon listens, e.g. `http://127.0.0.1:40123`.
    public let baseURL: String
    /// A project-scoped admin key.
    public let adminKey: String
    /// The database the daemon runs on (`postgres://…`).
    public let databaseURL: String

    /// Starts a daemon, runs `body` with it, and stops it (also when `body` throws).
    public static func run<Result: Sendable>(
        environment: [String: String] = [:], _ body: @Sendable (GatewayDaemon) async throws -> Result
    ) async throws -> Result {
        let settings = try await TestDatabase.create()
        let databaseURL = "postgres://\(settings.user)@\(settings.host):\(settings.port)/\(settings.database)"
        let keyFile = NSTemporaryDirectory() + "portcullis-\(UUID().uuidString).key"
        try String(repeating: "cd", count: 32).write(toFile: keyFile, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        var variables = [
            "PORTCULLIS_DATABASE_URL": databaseURL, "PORTCULLIS_PROJECT_ID": projectId, "PORTCULLIS_API_KEYS": apiKey,
            "PORTCULLIS_PUBLIC_URL": publicURL, "PORTCULLIS_MASTER_KEY_FILE": keyFile, "PORTCULLIS_LISTEN_HOST": "127.0.0.1",
            "PORTCULLIS_LISTEN_PORT": "0", "PORTCULLIS_DATABASE_MAX_CONNECTIONS": "4", "PORTCULLIS_LOG_LEVEL": "info",
            // Action links are logged, as `portcullis dev` does, unless a test sets a tenant's channel.
            "PORTCULLIS_EMAIL_DEFAULT_CHANNEL": "log",
            // The suite's own load (a dozen tests on two cores) is no database fault: 503s are
            // for the tests that make one, which set their own timeout.
            "PORTCULLIS_DATABASE_REQUEST_TIMEOUT": "30",
        ]
        variables.merge(environment) { $1 }
        let daemon = try DaemonProcess(["serve"], environment: variables)
        do {
            let port = try await daemon.listeningPort()
            let created = try await DaemonProcess.run(["admin-keys", "create", "--name", "tests"], environment: variables)
            guard created.status == 0, let secret = created.stdout.split(separator: "\n").last.map(String.init) else {
                throw TestSetupError("admin-keys create failed: \(created.stderr)")
            }
            let gateway = GatewayDaemon(baseURL: "http://127.0.0.1:\(port)", adminKey: secret, databaseURL: databaseURL)
            let result = try await body(gateway)
            try await stop(daemon)
            return result
        } catch {
            try? await stop(daemon)
            throw error
        }
    }

    private static func stop(_ daemon: DaemonProcess) async throws {
        daemon.signal(SIGTERM)
        let status = try await daemon.wait(timeout: .seconds(30))
        guard status == 0 else { throw TestSetupError("the daemon exited \(status); stderr: \(daemon.stderr)") }
    }

    /// An answer of the gateway: status and body.
    public struct Answer: Sendable {
        /// The HTTP status code.
        public let status: Int
        /// The body.
        public let body: Data
        /// The body as JSON (an object), or `[:]` when it is not one.
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The body as text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends a request with the project admin key (`bearer`, unless another is given).
    public func send(
        _ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:], bearer: String? = nil
    ) async throws -> Answer {
        guard let url = URL(string: baseURL + path) else { throw TestSetupError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(bearer ?? adminKey)", forHTTPHeaderField: "Authorization")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }

    /// Sends an end-user request (`?key=` is added) with a JSON body.
    public func endUser(_ operation: String, json: String) async throws -> Answer {
        try await send("POST", "/v1/\(operation)?key=\(Self.apiKey)", json: json, bearer: "")
    }

    /// Creates a tenant from its JSON resource and returns its id.
    public func createTenant(_ json: String) async throws -> String {
        let answer = try await send("POST", "/v2/projects/\(Self.projectId)/tenants", json: json)
        guard answer.status == 200, let name = answer.json["name"] as? String, let id = name.split(separator: "/").last else {
            throw TestSetupError("tenant creation failed: \(answer.status) \(answer.text)")
        }
        return String(id)
    }

    /// Changes a tenant's fields (`updateMask` lists them).
    public func patchTenant(_ tenant: String, mask: String, _ json: String) async throws {
        let answer = try await send("PATCH", "/v2/projects/\(Self.projectId)/tenants/\(tenant)?updateMask=\(mask)", json: json)
        guard answer.status == 200 else { throw TestSetupError("tenant update failed: \(answer.status) \(answer.text)") }
    }

    /// How many requests the daemon answered on `route` (a route template such as
    /// `/v1/token` or `/v1/projects/{project}/tenants/{tenant}/jwks`) with `status`, from its
    /// Prometheus `/metrics`: lines such as
    /// `portcullis_http_requests_total{route="/v1/token",method="POST",status="200"} 3`.
    public func requestCount(route: String, status: Int = 200) async throws -> Int {
        let metrics = try await send("GET", "/metrics").text
        return metrics.split(separator: "\n").filter { line in
            line.hasPrefix("portcullis_http_requests_total{") && line.contains("{route=\"\(route)\",")
                && line.contains(",status=\"\(status)\"}")
        }.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0) { $0 + Int($1) }
    }
}
