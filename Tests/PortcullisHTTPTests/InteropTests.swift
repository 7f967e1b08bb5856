import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
import PortcullisJSON
#endif

/// Independent peers: PyJWT and jose (Node.js) verify our tokens from the JWKS alone, and
/// nginx's `auth_request` runs deploy/nginx-auth-request.conf against the real daemon.
@Suite("Interoperability")
struct InteropTests {
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func tool(_ variable: String) throws -> String {
        guard let path = ProcessInfo.processInfo.environment[variable], FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSetupError("\(variable) is not set: run the tests with scripts/test, which installs it")
        }
        return path
    }

    /// Runs a program to completion; returns exit status and combined output.
    static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test(
        "PyJWT verifies ID tokens from the tenant's JWKS, before and after rotation, and refuses another tenant's",
        arguments: ["RS256", "ES256", "EdDSA"])
    func pyjwt(algorithm: String) async throws {
        let python = try Self.tool("PORTCULLIS_TEST_PYTHON")
        let script = Self.packageRoot.appendingPathComponent("Tests/interop/verify_id_token.py").path
        try await TestGateway.run { gateway in
            let a = try await gateway.createTenant(#"{"displayName":"py","allowPasswordSignup":true,"signingAlgorithm":"\#(algorithm)"}"#)
            let b = try await gateway.createTenant(
                #"{"displayName":"other","allowPasswordSignup":true,"signingAlgorithm":"\#(algorithm)"}"#)
            let session = try await gateway.signUp("py@example.com", tenant: a)
            _ = try await gateway.signUp("py@example.com", tenant: b)
            let issuer = "http://localhost/\(TestGateway.projectId)/tenants/\(a)"
            func verify(_ token: String, jwksOf tenant: String) async throws -> (Int32, String) {
                let file = NSTemporaryDirectory() + "jwks-\(UUID().uuidString).json"
                try await TokenTests.jwks(gateway, tenant: tenant).write(toFile: file, atomically: false, encoding: .utf8)
                defer { try? FileManager.default.removeItem(atPath: file) }
                return try Self.run(python, [script, file, token, issuer, TestGateway.projectId])
            }
            let (status, output) = try await verify(session.idToken, jwksOf: a)
            #expect(status == 0 && output.contains("ok \(session.uid)"), "\(output)")
            let (otherStatus, otherOutput) = try await verify(session.idToken, jwksOf: b)
            #expect(otherStatus == 1 && otherOutput.contains("invalid"), "\(otherOutput)")

            _ = try await gateway.send(.post, "\(gateway.tenants)/\(a)/keys:rotate")
            let fresh = try await gateway.signIn("py@example.com", tenant: a)
            for token in [session.idToken, fresh.idToken] {
                let (rotatedStatus, rotatedOutput) = try await verify(token, jwksOf: a)
                #expect(rotatedStatus == 0, "\(rotatedOutput)")
            }
        }
    }

    @Test(
        "jose (Node.js) verifies ID tokens as the README's JavaScript example does, fetching the JWKS; another tenant's token fails",
        arguments: ["RS256", "ES256", "EdDSA"])
    func jose(algorithm: String) async throws {
        let node = try Self.tool("PORTCULLIS_TEST_NODE")
        guard let jose = ProcessInfo.processInfo.environment["PORTCULLIS_TEST_JOSE"] else {
            throw TestSetupError("PORTCULLIS_TEST_JOSE is not set: run the tests with scripts/test, which installs it")
        }
        // `import … from "jose"` resolves from the script's own node_modules, as in an npm project.
        let directory = NSTemporaryDirectory() + "jose-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/node_modules", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createSymbolicLink(atPath: directory + "/node_modules/jose", withDestinationPath: jose)
        let script = directory + "/verify_id_token.mjs"
        try FileManager.default.copyItem(
            atPath: Self.packageRoot.appendingPathComponent("Tests/interop/verify_id_token.mjs").path, toPath: script)
        try await TestGateway.run(live: true) { gateway in
            guard let port = gateway.client.port else { throw TestSetupError("no port") }
            let a = try await gateway.createTenant(#"{"displayName":"js","enableAnonymousUser":true,"signingAlgorithm":"\#(algorithm)"}"#)
            let b = try await gateway.createTenant(#"{"displayName":"js","enableAnonymousUser":true,"signingAlgorithm":"\#(algorithm)"}"#)
            // Guests: no password hash on the way, which a parallel run can starve past the live
            // test client's read timeout (hashing threads run under SCHED_IDLE).
            let session = try Session(try await gateway.endUser("accounts:signUp", [:], tenant: a).json())
            let other = try Session(try await gateway.endUser("accounts:signUp", [:], tenant: b).json())
            // Waited for without blocking a thread: the script calls back into this server.
            func verify(_ token: String, as tenant: String) async throws -> (Int32, String) {
                let jwks = "http://127.0.0.1:\(port)/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/jwks"
                let issuer = "http://localhost/\(TestGateway.projectId)/tenants/\(tenant)"
                let run = try await DaemonProcess.run(
                    [script, jwks, token, issuer, TestGateway.projectId, tenant], executable: node)
                return (run.status, run.stdout + run.stderr)
            }
            let (status, output) = try await verify(session.idToken, as: a)
            #expect(status == 0 && output.contains("ok \(session.uid)"), "\(output)")
            // Tenant B's token against tenant A's keys and issuer: no key has its kid.
            let (otherStatus, otherOutput) = try await verify(other.idToken, as: a)
            #expect(otherStatus == 1 && otherOutput.contains("invalid"), "\(otherOutput)")
            let tampered = session.idToken.dropLast(4) + (session.idToken.hasSuffix("AAAA") ? "BBBB" : "AAAA")
            let (forgedStatus, forgedOutput) = try await verify(String(tampered), as: a)
            #expect(forgedStatus == 1 && forgedOutput.contains("invalid"), "\(forgedOutput)")
        }
    }

    @Test("nginx auth_request with deploy/nginx-auth-request.conf forwards an authenticated request and rejects others")
    func nginx() async throws {
        let nginx = try Self.tool("PORTCULLIS_TEST_NGINX")
        let server = try TestGateway.make(settings: try await TestDatabase.create())
        try await server.application.test(.live) { client in
            guard let port = client.port else { throw TestSetupError("no port") }
            let key = try await server.services.adminKeys.create(displayName: "n", scope: .project, actor: "t").secret
            let gateway = TestGateway(server: server, client: client, projectKey: key)
            // A guest given an email: no password hash on the way. Hashing threads run under
            // SCHED_IDLE, and in a parallel test run that saturates both cores a sign-up can
            // outwait the live test client's fixed 15 s read timeout.
            let tenant = try await gateway.createTenant(#"{"displayName":"ng","enableAnonymousUser":true}"#)
            let guest = try Session(try await gateway.endUser("accounts:signUp", [:], tenant: tenant).json())
            let session = try Session(
                try await gateway.endUser(
                    "accounts:update", ["idToken": .string(guest.idToken), "email": "ng@example.com"], tenant: tenant
                ).json())

            let directory = NSTemporaryDirectory() + "nginx-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // Every directory up to the temp dir must be reachable by nginx's worker user.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
            let (proxyPort, appPort) = (Self.freePort(), Self.freePort())
            let example = try String(contentsOf: Self.packageRoot.appendingPathComponent("deploy/nginx-auth-request.conf"), encoding: .utf8)
                .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
                .replacingOccurrences(of: "127.0.0.1:9000", with: "127.0.0.1:\(appPort)")
                .replacingOccurrences(of: "127.0.0.1:8000", with: "127.0.0.1:\(proxyPort)")
            try example.write(toFile: "\(directory)/portcullis.conf", atomically: false, encoding: .utf8)
            try """
            daemon off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(directory)/body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
                include \(directory)/portcullis.conf;
                server {
                    listen 127.0.0.1:\(appPort);
                    location / { return 200 "app saw user=$http_x_auth_user_id tenant=$http_x_auth_tenant_id email=$http_x_auth_email\\n"; }
                }
            }
            """.write(toFile: "\(directory)/nginx.conf", atomically: false, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-p", directory, "-c", "\(directory)/nginx.conf"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { process.terminate(); process.waitUntilExit() }

            func get(_ token: String?) async throws -> (Int, String) {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(proxyPort)/dashboard")!)  // safe: constant URL
                if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
                request.setValue("intruder", forHTTPHeaderField: "X-Auth-User-Id")
                let (data, response) = try await URLSession.shared.data(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
            }
            var answer: (Int, String) = (0, "")
            _ = try await eventually(within: .seconds(10)) {
                answer = (try? await get(session.idToken)) ?? (0, "")
                return answer.0 != 0
            }
            #expect(answer.0 == 200, "\(answer)")
            #expect(answer.1.contains("user=\(session.uid) tenant=\(tenant) email=ng@example.com"), "\(answer.1)")
            let (status, body) = try await get(nil)
            #expect(status == 401 && !body.contains("app saw"))
            let (forgedStatus, forgedBody) = try await get(session.idToken + "x")
            #expect(forgedStatus == 401 && !forgedBody.contains("app saw"))
        }
    }

    static func freePort() -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
