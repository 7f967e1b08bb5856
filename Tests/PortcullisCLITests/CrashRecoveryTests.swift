import Foundation
import PortcullisStore
import PortcullisTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// DESIGN.md §6: nothing acknowledged is lost. A daemon killed without warning (`kill -9`,
/// the OOM killer, a lost machine) leaves nothing a new one on the same database cannot use.
@Suite("Restart after kill -9")
struct CrashRecoveryTests {
    static let project = "crash-test"
    static let apiKey = "crash-key"

    /// A request to a daemon: the status and the JSON object answered.
    static func call(
        _ method: String, _ port: Int, _ path: String, json: String? = nil, bearer: String? = nil
    ) async throws -> (status: Int, body: [String: Any]) {
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else { throw TestSetupError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }

    @Test("a daemon killed with SIGKILL: the next one serves its users, sessions, rotations and keys, and stops cleanly")
    func restartAfterKill() async throws {
        let settings = try await TestDatabase.create()
        let database = DaemonTests.url(settings)
        let keyFile = NSTemporaryDirectory() + "portcullis-\(UUID().uuidString).key"
        try String(repeating: "cd", count: 32).write(toFile: keyFile, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        let arguments = ["serve", "--database-url", database, "--listen-port", "0", "--project-id", Self.project]
        let environment = ["PORTCULLIS_MASTER_KEY_FILE": keyFile, "PORTCULLIS_API_KEYS": Self.apiKey]
        let migrated = try await DaemonProcess.run(
            ["migrate", "--database-url", database, "--project-id", Self.project], environment: environment)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let created = try await DaemonProcess.run(
            ["admin-keys", "create", "--database-url", database, "--project-id", Self.project, "--name", "crash"],
            environment: environment)
        #expect(created.status == 0, "\(created.stderr)")
        let admin = try #require(created.stdout.split(separator: "\n").last.map(String.init))

        let first = try DaemonProcess(arguments, environment: environment)
        var port = try await first.listeningPort()
        let config = try await Self.call(
            "PATCH", port, "/v2/projects/\(Self.project)/config?updateMask=allowPasswordSignup", json: #"{"allowPasswordSignup":true}"#,
            bearer: admin)
        #expect(config.status == 200, "\(config.body)")
        let credentials = #"{"email":"kept@example.com","password":"correct horse"}"#
        let signUp = try await Self.call("POST", port, "/v1/accounts:signUp?key=\(Self.apiKey)", json: credentials)
        #expect(signUp.status == 200, "\(signUp.body)")
        let idToken = try #require(signUp.body["idToken"] as? String)
        let firstRefresh = try #require(signUp.body["refreshToken"] as? String)
        let rotated = try await Self.call(
            "POST", port, "/v1/token?key=\(Self.apiKey)", json: #"{"grant_type":"refresh_token","refresh_token":"\#(firstRefresh)"}"#)
        #expect(rotated.status == 200, "\(rotated.body)")
        let acknowledged = try #require(rotated.body["refresh_token"] as? String)

        first.signal(SIGKILL)
        #expect(try await first.wait(timeout: .seconds(30)) == SIGKILL)

        let second = try DaemonProcess(arguments, environment: environment)
        port = try await second.listeningPort()
        // The user, the rotation the first daemon acknowledged, and the tenant's signing key survive.
        let signIn = try await Self.call("POST", port, "/v1/accounts:signInWithPassword?key=\(Self.apiKey)", json: credentials)
        #expect(signIn.status == 200, "\(signIn.body)")
        let refreshed = try await Self.call(
            "POST", port, "/v1/token?key=\(Self.apiKey)", json: #"{"grant_type":"refresh_token","refresh_token":"\#(acknowledged)"}"#)
        #expect(refreshed.status == 200, "\(refreshed.body)")
        #expect(refreshed.body["user_id"] as? String == signUp.body["localId"] as? String)
        guard let url = URL(string: "http://127.0.0.1:\(port)/v1/verify") else { throw TestSetupError("bad URL") }
        var verify = URLRequest(url: url)
        verify.setValue("Bearer \(idToken)", forHTTPHeaderField: "Authorization")
        let (_, answer) = try await URLSession.shared.data(for: verify)
        #expect((answer as? HTTPURLResponse)?.statusCode == 200, "the first daemon's ID token")
        #expect((answer as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Auth-Email") == "kept@example.com")

        second.signal(SIGTERM)
        #expect(try await second.wait(timeout: .seconds(30)) == 0, "stderr: \(second.stderr)")
    }
}
