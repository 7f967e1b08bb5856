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

@Suite("The portcullis executable")
struct DaemonTests {
    static func url(_ settings: DatabaseSettings) -> String {
        "postgres://\(settings.user)@\(settings.host):\(settings.port)/\(settings.database)"
    }

    @Test(
        "a missing or invalid setting exits 78 naming the key",
        arguments: [
            (
                ["serve", "--listen-port", "abc", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"], [String: String](),
                "listen.port"
            ),
            (
                ["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"], ["PORTCULLIS_LISTEN_PORT": "99999"],
                "listen.port"
            ),
            (["migrate", "--database-url", "postgres://u@127.0.0.1/d"], [:], "project_id"),
            (["migrate", "--project-id", "p"], [:], "database.url"),
            (["migrate", "--project-id", "p", "--database-url", "mysql://nope"], [:], "database.url"),
            (["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d", "--log-level", "loud"], [:], "log.level"),
            (["serve", "--config", "/nonexistent/portcullis.yaml"], [:], "config"),
            (
                ["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"], ["PORTCULLIS_PUBLIC_URL": "ftp://x"],
                "public_url"
            ),
            (["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"], [:], "master_key"),
            (
                ["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"],
                ["PORTCULLIS_MASTER_KEY_FILE": "/nonexistent"], "master_key.file"
            ),
            (
                ["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"],
                ["PORTCULLIS_MASTER_KEY_ENV": "MK", "MK": "short"], "master_key.env"
            ),
            (
                ["migrate", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"], ["PORTCULLIS_DATABASE_TLS": "sometimes"],
                "database.tls"
            ),
            (
                ["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"],
                ["PORTCULLIS_TRUSTED_PROXIES": "10.0.0.0/8, 10.1.0.0/99"], "trusted_proxies"
            ),
            (
                ["serve", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"],
                ["PORTCULLIS_OUTBOUND_ALLOWED_PRIVATE_NETWORKS": "127.0.0.0/8, localhost"], "outbound.allowed_private_networks"
            ),
            (
                ["migrate", "--project-id", "p", "--database-url", "postgres://u@127.0.0.1/d"],
                ["PORTCULLIS_LISTEN_IDLE_TIMEOUT_SECONDS": "0"], "listen.idle_timeout_seconds"
            ),
            (
                ["migrate", "--project-id", "p"], ["PORTCULLIS_DATABASE_HOSTS": "h1, h2:x", "PORTCULLIS_DATABASE_USER": "u"],
                "database.hosts"
            ),
        ])
    func configErrors(arguments: [String], environment: [String: String], key: String) async throws {
        let result = try await DaemonProcess.run(arguments, environment: environment)
        #expect(result.status == 78, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(key), "stderr: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one clear line: \(result.stderr)")
    }

    @Test("an unreachable database, or one without the TLS that database.tls requires, fails in seconds naming the server")
    func unreachableDatabaseFailsFast() async throws {
        let settings = try await TestDatabase.create()
        let started = ContinuousClock.now
        let withoutTLS = try await DaemonProcess.run(
            ["migrate", "--project-id", "p", "--database-url", Self.url(settings)], environment: ["PORTCULLIS_DATABASE_TLS": "require"])
        #expect(withoutTLS.status != 0)
        #expect(
            withoutTLS.stderr.contains("\(settings.host):\(settings.port)") && withoutTLS.stderr.contains("TLS"), "\(withoutTLS.stderr)")
        // Several servers (database.hosts): a dead one first is passed over for the one that takes writes.
        let twoHosts = try await DaemonProcess.run(
            ["migrate", "--project-id", "p"],
            environment: [
                "PORTCULLIS_DATABASE_HOSTS": "127.0.0.1:1, \(settings.host):\(settings.port)", "PORTCULLIS_DATABASE_USER": settings.user,
                "PORTCULLIS_DATABASE_NAME": settings.database,
            ])
        #expect(twoHosts.status == 0, "\(twoHosts.stderr)")
        let nobody = try await DaemonProcess.run(["migrate", "--project-id", "p", "--database-url", "postgres://u:pw-secret@127.0.0.1:1/d"])
        #expect(nobody.status != 0)
        #expect(nobody.stderr.contains("cannot use PostgreSQL at 127.0.0.1:1"), "\(nobody.stderr)")
        #expect(!nobody.stderr.contains("pw-secret"))
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test("an operator's mistake is a sentence from the error registry, not a Swift value")
    func errorsAreSentences() async throws {
        let settings = try await TestDatabase.create()
        let arguments = ["--project-id", "p", "--database-url", Self.url(settings)]
        #expect(try await DaemonProcess.run(["migrate"] + arguments).status == 0)
        let missing = try await DaemonProcess.run(["tenants", "show", "no-such-tenant"] + arguments)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("There is no such tenant. (TENANT_NOT_FOUND)"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("AuthError("), "\(missing.stderr)")
    }

    @Test("flags override the environment, which overrides the file")
    func precedence() async throws {
        let settings = try await TestDatabase.create()
        let file = NSTemporaryDirectory() + "portcullis-\(UUID().uuidString).yaml"
        try "project_id: from-file\ndatabase:\n  url: \"not a url\"\n".write(toFile: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }

        let fileOnly = try await DaemonProcess.run(["migrate", "--config", file])
        #expect(fileOnly.status == 78 && fileOnly.stderr.contains("database.url"), "\(fileOnly.stderr)")

        let environment = ["PORTCULLIS_DATABASE_URL": Self.url(settings)]
        let envWins = try await DaemonProcess.run(["migrate", "--config", file], environment: environment)
        #expect(envWins.status == 0, "\(envWins.stderr)")
        #expect(envWins.stdout.contains("schema version \(Migration.latestVersion)"))

        let flagWins = try await DaemonProcess.run(
            ["migrate", "--config", file, "--database-url", "bogus"], environment: environment)
        #expect(flagWins.status == 78 && flagWins.stderr.contains("database.url"), "\(flagWins.stderr)")
    }

    @Test("three concurrent `portcullis migrate` runs all succeed with one schema")
    func concurrentMigrate() async throws {
        let settings = try await TestDatabase.create()
        let arguments = ["migrate", "--project-id", "p", "--database-url", Self.url(settings)]
        let processes = try (0..<3).map { _ in try DaemonProcess(arguments) }
        for process in processes {
            let status = try await process.wait()
            #expect(status == 0, "\(process.stderr)")
        }
        let applied = processes.filter { $0.stdout.contains("applied") }.count
        #expect(applied == 1, "exactly one run applies: \(processes.map(\.stdout))")
        let again = try await DaemonProcess.run(arguments)
        #expect(again.status == 0 && again.stdout.contains("schema is current"), "\(again.stdout)")
    }

    @Test("serve: READY=1 on NOTIFY_SOCKET, SIGHUP changes the log level, SIGTERM says STOPPING=1 and exits 0")
    func lifecycle() async throws {
        let settings = try await TestDatabase.create()
        let file = NSTemporaryDirectory() + "portcullis-\(UUID().uuidString).yaml"
        func writeConfig(level: String) throws {
            try """
            project_id: lifecycle
            listen:
              host: 127.0.0.1
              port: 0
            database:
              url: \(Self.url(settings))
            log:
              level: \(level)
            master_key:
              file: \(keyFile)
            """.write(toFile: file, atomically: false, encoding: .utf8)
        }
        let keyFile = NSTemporaryDirectory() + "portcullis-\(UUID().uuidString).key"
        try String(repeating: "ab", count: 32).write(toFile: keyFile, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        try writeConfig(level: "warning")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let notify = try NotifySocket()
        let daemon = try DaemonProcess(["serve", "--config", file], environment: ["NOTIFY_SOCKET": notify.path])

        let ready = try await notify.await("READY=1", timeout: .seconds(60))
        #expect(ready, "no READY=1; stderr: \(daemon.stderr)")
        // At level warning the notice "portcullis is listening" is suppressed.
        #expect(!daemon.stderr.contains("portcullis is listening"), "\(daemon.stderr)")

        try writeConfig(level: "info")
        daemon.signal(SIGHUP)
        // The reload notice itself is only printed if the new level (info) took effect.
        let reloaded = try await eventually(within: .seconds(10)) {
            daemon.stderr.contains("configuration reloaded") && daemon.stderr.contains("log.level=info")
        }
        #expect(reloaded != nil, "stderr: \(daemon.stderr)")

        daemon.signal(SIGTERM)
        #expect(try await notify.await("STOPPING=1", timeout: .seconds(15)))
        let status = try await daemon.wait(timeout: .seconds(30))
        #expect(status == 0, "stderr: \(daemon.stderr)")
    }

    @Test("dev accepts the Admin SDKs' emulator credential (Bearer owner) as a project key; serve answers it 401")
    func emulatorCredentialOnlyInDev() async throws {
        let settings = try await TestDatabase.create()
        let state = NSTemporaryDirectory() + "portcullis-dev-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let users = "/identitytoolkit.googleapis.com/v1/projects/demo-project/accounts"

        let dev = try DaemonProcess(["dev", "--database-url", Self.url(settings), "--listen-port", "0", "--state-directory", state])
        let devPort = try await dev.listeningPort()
        #expect(try await Self.post("http://127.0.0.1:\(devPort)\(users)", #"{"localId":"sdk-made"}"#, bearer: "owner") == 200)
        #expect(try await Self.post("http://127.0.0.1:\(devPort)\(users):lookup", #"{"localId":["sdk-made"]}"#, bearer: "owner") == 200)
        dev.signal(SIGTERM)
        #expect(try await dev.wait(timeout: .seconds(30)) == 0, "stderr: \(dev.stderr)")

        let serve = try DaemonProcess(
            ["serve", "--database-url", Self.url(settings), "--listen-port", "0", "--project-id", "demo-project"],
            environment: ["PORTCULLIS_MASTER_KEY_FILE": "\(state)/master.key"])
        let servePort = try await serve.listeningPort()
        #expect(try await Self.post("http://127.0.0.1:\(servePort)\(users):lookup", #"{"localId":["sdk-made"]}"#, bearer: "owner") == 401)
        serve.signal(SIGTERM)
        #expect(try await serve.wait(timeout: .seconds(30)) == 0, "stderr: \(serve.stderr)")
    }

    /// POSTs JSON with a bearer credential; the answer's status.
    static func get(_ url: String) async throws -> Int {
        guard let target = URL(string: url) else { throw TestSetupError("bad URL \(url)") }
        let (_, response) = try await URLSession.shared.data(from: target)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    @Test("SIGTERM drains: /readyz answers 503 at once while requests are still served for listen.drain_seconds, then it exits 0")
    func drain() async throws {
        let settings = try await TestDatabase.create()
        let keyFile = NSTemporaryDirectory() + "portcullis-\(UUID().uuidString).key"
        try String(repeating: "ef", count: 32).write(toFile: keyFile, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        let daemon = try DaemonProcess(
            ["serve", "--project-id", "drain", "--database-url", Self.url(settings), "--listen-port", "0"],
            environment: ["PORTCULLIS_MASTER_KEY_FILE": keyFile, "PORTCULLIS_LISTEN_DRAIN_SECONDS": "3"])
        let base = "http://127.0.0.1:\(try await daemon.listeningPort())"
        #expect(try await Self.get(base + "/readyz") == 200)
        let signalled = ContinuousClock.now
        daemon.signal(SIGTERM)
        let draining = try await eventually(within: .seconds(2)) { (try? await Self.get(base + "/readyz")) == 503 }
        #expect(draining != nil, "stderr: \(daemon.stderr)")
        // A proxy that has not noticed yet is still served.
        #expect(try await Self.get(base + "/healthz") == 200)
        #expect(try await Self.get(base + "/v1/projects/drain/jwks") == 200)
        #expect(try await daemon.wait(timeout: .seconds(30)) == 0, "stderr: \(daemon.stderr)")
        #expect(ContinuousClock.now - signalled >= .seconds(3))
        await #expect(throws: (any Error).self) { try await Self.get(base + "/healthz") }
    }

    static func post(_ url: String, _ json: String, bearer: String) async throws -> Int {
        guard let target = URL(string: url) else { throw TestSetupError("bad URL \(url)") }
        var request = URLRequest(url: target)
        request.httpMethod = "POST"
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(json.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}
