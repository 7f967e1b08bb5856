import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The official firebase-admin Python SDK against the real gateway on a real socket, pointed
/// at it as an emulator (`FIREBASE_AUTH_EMULATOR_HOST`), as `portcullis dev` serves it.
@Suite("firebase-admin user management")
struct AdminSDKInteropTests {
    @Test(
        "create, get, get by email, update, claims, revoke, list pages, get_users, email links, import_users with scrypt, delete, delete_users: for the project and a tenant"
    )
    func pythonAdminSDK() async throws {
        let python = try InteropTests.tool("PORTCULLIS_TEST_PYTHON")
        let script = InteropTests.packageRoot.appendingPathComponent("Tests/interop/admin_users.py").path
        try await TestGateway.run(live: true, configure: { $0.acceptsEmulatorAdminCredential = true }) { gateway in
            guard let port = gateway.client.port else { throw TestSetupError("no port") }
            let tenant = try await gateway.createTenant(#"{"displayName":"sdk","allowPasswordSignup":true}"#)
            let (status, output) = try await ChildProcess.run(
                python, [script, "127.0.0.1:\(port)", TestGateway.projectId, tenant, TestGateway.apiKey])
            #expect(status == 0 && output.hasSuffix("ok\n"), "\(output)")

            // The gateway's side of it: every change audited under the emulator credential, in its scope.
            let events = try await gateway.send(.get, "/v2/projects/\(TestGateway.projectId)/auditEvents?pageSize=1000").json()
                .list(at: ["auditEvents"]).filter { $0.string(at: ["action"])?.hasPrefix("user.") == true }
            let tenantEvents = events.filter { $0.string(at: ["tenantId"]) == tenant }
            #expect(
                events.count > 20 && tenantEvents.count * 2 == events.count, "\(events.count) events, \(tenantEvents.count) in the tenant")
            #expect(events.allSatisfy { $0.string(at: ["actor"]) == "adminKey:emulator-owner" })
        }
    }
}

/// A child process run without blocking a thread of the cooperative pool: the gateway it
/// talks to answers on the same process's threads.
enum ChildProcess {
    /// Runs `executable` to completion (killed after `timeout`); its exit status and combined output.
    static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(180)) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = Collected()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            output.data.withLock { $0.append(chunk) }
        }
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            process.terminate()
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        watchdog.cancel()
        pipe.fileHandleForReading.readabilityHandler = nil
        let rest = pipe.fileHandleForReading.readDataToEndOfFile()
        let text = output.data.withLock { data in
            data.append(rest)
            return String(decoding: data, as: UTF8.self)
        }
        return (process.terminationStatus, text)
    }

    /// Output read so far, appended to from the pipe's reading thread.
    private final class Collected: Sendable {
        let data = Mutex(Data())
    }
}
