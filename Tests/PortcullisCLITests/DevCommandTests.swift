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

@Suite("portcullis dev and scripts/dev, started twice")
struct DevCommandTests {
    /// The admin key the banner printed.
    static func adminKey(_ dev: DaemonProcess) async throws -> String {
        var key: String?
        _ = try await eventually(within: .seconds(60)) {
            key = dev.stdout.split(separator: "\n").first { $0.contains("admin key (project scope):") }
                .flatMap { $0.split(separator: " ").last.map(String.init) }
            return key != nil || !dev.process.isRunning
        }
        guard let key else { throw TestSetupError("no admin key in the banner: \(dev.stdout) \(dev.stderr)") }
        return key
    }

    /// The live admin keys, as the project key `key` sees them.
    static func liveKeys(port: Int, key: String) async throws -> Int {
        guard let url = URL(string: "http://127.0.0.1:\(port)/v2/projects/demo-project/adminKeys") else { return -1 }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (json?["adminKeys"] as? [Any])?.count ?? -1
    }

    @Test("restarts keep one live dev admin key, the one the banner printed before; a revoked one is replaced")
    func adminKeyKept() async throws {
        let settings = try await TestDatabase.create()
        let state = NSTemporaryDirectory() + "portcullis-dev-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let arguments = ["dev", "--database-url", DaemonTests.url(settings), "--listen-port", "0", "--state-directory", state]
        var keys: [String] = []
        for _ in 0..<3 {
            let dev = try DaemonProcess(arguments)
            let port = try await dev.listeningPort()
            let key = try await Self.adminKey(dev)
            keys.append(key)
            #expect(try await Self.liveKeys(port: port, key: key) == 1)
            dev.signal(SIGTERM)
            #expect(try await dev.wait(timeout: .seconds(30)) == 0, "stderr: \(dev.stderr)")
        }
        #expect(Set(keys).count == 1, "\(keys)")

        // Revoked by the operator: the next start makes a new one, and it is again the only one.
        let command = ["--database-url", DaemonTests.url(settings), "--project-id", "demo-project"]
        let listed = try await DaemonProcess.run(["admin-keys", "list"] + command)
        let keyId = try #require(listed.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").first }.first)
        let revoke = try await DaemonProcess.run(["admin-keys", "revoke", String(keyId)] + command)
        #expect(revoke.status == 0, "\(revoke.stderr)")
        let dev = try DaemonProcess(arguments)
        let port = try await dev.listeningPort()
        let key = try await Self.adminKey(dev)
        #expect(key != keys[0])
        #expect(try await Self.liveKeys(port: port, key: key) == 1)
        dev.signal(SIGTERM)
        #expect(try await dev.wait(timeout: .seconds(30)) == 0, "stderr: \(dev.stderr)")
    }

    @Test("a second daemon on a taken port says which address is taken and exits non-zero")
    func takenPort() async throws {
        let settings = try await TestDatabase.create()
        let state = NSTemporaryDirectory() + "portcullis-dev-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let first = try DaemonProcess([
            "dev", "--database-url", DaemonTests.url(settings), "--listen-port", "0", "--state-directory", state,
        ])
        let port = try await first.listeningPort()
        let second = try await DaemonProcess.run(
            ["dev", "--database-url", DaemonTests.url(settings), "--listen-port", "\(port)", "--state-directory", state])
        #expect(second.status != 0)
        #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(port)"), "\(second.stderr)")
        #expect(second.stderr.contains("already in use"), "\(second.stderr)")
        // The first one still serves.
        let health = try await URLSession.shared.data(from: try #require(URL(string: "http://127.0.0.1:\(port)/healthz")))
        #expect((health.1 as? HTTPURLResponse)?.statusCode == 200)
        first.signal(SIGTERM)
        #expect(try await first.wait(timeout: .seconds(30)) == 0, "stderr: \(first.stderr)")
    }

    @Test("scripts/dev while another runs on the same state directory refuses, names the first, and touches nothing")
    func scriptsDevTwice() async throws {
        let state = NSTemporaryDirectory() + "portcullis-dev-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        // The first run, as far as the second can tell: its lock held, its pid recorded.
        let first = try DaemonProcess(
            ["-c", "exec 9>\"$0/dev.lock\"; flock -n 9; echo $$ >\"$0/dev.pid\"; sleep 60", state], executable: "/bin/bash")
        defer { first.signal(SIGKILL) }
        _ = try await eventually { FileManager.default.fileExists(atPath: "\(state)/dev.pid") }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/dev").path
        let second = try await DaemonProcess.run([script], environment: ["PORTCULLIS_DEV_STATE": state], executable: "/bin/bash")
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running (pid \(first.process.processIdentifier)"), "\(second.stderr)")
        #expect(second.stderr.contains("Nothing was changed"))
        // No cluster, no build, no port file: nothing was touched.
        let left = try FileManager.default.contentsOfDirectory(atPath: state).sorted()
        #expect(left == ["dev.lock", "dev.pid"], "\(left)")
    }
}
