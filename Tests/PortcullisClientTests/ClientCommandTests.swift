import Foundation
import PortcullisTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis-client`, the SDK's command-line example, run as a user runs it: each
/// command a new process, the signed-in user kept in a state directory between them.
@Suite("portcullis-client")
struct ClientCommandTests {
    static var binary: String { DaemonProcess.builtExecutable("portcullis-client", variable: "PORTCULLIS_CLIENT_BINARY") }

    @Test(
        "sign-in survives a restart (whoami in a new process); watch prints the events, another process's sign-out included; sign-out forgets the user"
    )
    func signInWhoamiWatchSignOut() async throws {
        try await ClientFixture.run { fixture in
            let state = NSTemporaryDirectory() + "portcullis-client-cli-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: state) }
            let common = [
                "--url", fixture.gateway.baseURL, "--api-key", GatewayDaemon.apiKey, "--project", GatewayDaemon.projectId,
                "--tenant", fixture.tenant ?? "", "--state-directory", state,
            ]
            func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Int32, String, String) {
                let result = try await DaemonProcess.run(arguments + common, environment: environment, executable: Self.binary)
                return (result.status, result.stdout, result.stderr)
            }

            let signedOut = try await run(["whoami"])
            #expect(signedOut.0 == 1 && signedOut.1.contains("signed out"))
            let signUp = try await run(
                ["sign-in", "--create", "--email", "cli@example.com"], environment: ["PORTCULLIS_CLIENT_PASSWORD": "cli-password"])
            #expect(signUp.0 == 0 && signUp.1.contains("signed in:") && signUp.1.contains("<cli@example.com>"), "\(signUp)")
            let whoami = try await run(["whoami"])
            #expect(whoami.0 == 0 && whoami.1.contains("<cli@example.com>") && whoami.1.contains("signed in with password"), "\(whoami)")

            let watch = try await run(["watch", "--count", "2"])
            #expect(watch.0 == 0, "\(watch)")
            #expect(watch.1.contains("auth-state: ") && watch.1.contains("<cli@example.com>"))
            #expect(watch.1.contains("id-token: ") && watch.1.contains("expires"))

            let tenant = try #require(fixture.tenant)
            try await fixture.gateway.patchTenant(
                tenant, mask: "client.permissions", #"{"client":{"permissions":{"disabledUserSignup":true}}}"#)
            let refused = try await run(
                ["sign-in", "--create", "--email", "other@example.com"], environment: ["PORTCULLIS_CLIENT_PASSWORD": "cli-password"])
            #expect(refused.0 == 1 && refused.2.contains("auth/admin-restricted-operation (ADMIN_ONLY_OPERATION"), "\(refused)")

            // A watch already running hears the sign-out another process makes.
            let watching = try DaemonProcess(["watch", "--count", "4"] + common, executable: Self.binary)
            _ = try await eventually(within: .seconds(15)) {
                watching.stdout.contains("auth-state: ") && watching.stdout.contains("id-token: ")
            }
            let signOut = try await run(["sign-out"])
            #expect(signOut.0 == 0)
            #expect(try await watching.wait(timeout: .seconds(15)) == 0, "\(watching.stdout) \(watching.stderr)")
            #expect(watching.stdout.contains("auth-state: signed out"), "\(watching.stdout)")
            let gone = try await run(["whoami"])
            #expect(gone.0 == 1 && gone.1.contains("signed out"))
        }
    }
}
