public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A built executable of this package (`portcullis` unless told otherwise), run as a child process.
public final class DaemonProcess: Sendable {
    /// The built `portcullis` binary: `PORTCULLIS_BINARY`, else `.build/debug/portcullis`.
    public static var binary: String { builtExecutable("portcullis", variable: "PORTCULLIS_BINARY") }

    /// A built executable of this package: `$variable` when set, else `.build/debug/<name>`.
    public static func builtExecutable(_ name: String, variable: String) -> String {
        if let path = ProcessInfo.processInfo.environment[variable] { return path }
        // Tests/PortcullisTestSupport/<file> → package root → .build/debug/<name>
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/\(name)").path
    }

    /// The child process.
    public let process = Process()
    private let output = OutputBuffer()

    /// Starts `executable <arguments>` (the `portcullis` binary by default) with only
    /// `environment` (plus PATH and HOME).
    public init(_ arguments: [String], environment: [String: String] = [:], executable: String = DaemonProcess.binary) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        env.merge(environment) { $1 }
        process.environment = env
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let output = self.output
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            output.text.withLock { $0.stdout += text }
        }
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            output.text.withLock { $0.stderr += text }
        }
        try process.run()
    }

    /// What the process wrote to standard output so far.
    public var stdout: String { output.text.withLock { $0.stdout } }
    /// What the process wrote to standard error so far.
    public var stderr: String { output.text.withLock { $0.stderr } }

    /// Waits for exit (killing the process after `timeout`) and returns its status.
    public func wait(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let start = ContinuousClock.now
        while process.isRunning {
            if ContinuousClock.now - start > timeout {
                process.terminate()
                throw TestSetupError("portcullis \(process.arguments ?? []) did not exit within \(timeout); stderr: \(stderr)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Let the pipes drain.
        try await Task.sleep(for: .milliseconds(100))
        return process.terminationStatus
    }

    /// The port a daemon started with `--listen-port 0` logged it listens on.
    public func listeningPort(within timeout: Duration = .seconds(60)) async throws -> Int {
        var port: Int?
        _ = try await eventually(within: timeout) {
            guard let line = stderr.split(separator: "\n").first(where: { $0.contains("portcullis is listening") }),
                let address = line.split(separator: " ").first(where: { $0.hasPrefix("address=") }),
                let number = address.split(separator: ":").last.flatMap({ Int($0) })
            else { return process.isRunning ? false : true }
            port = number
            return true
        }
        guard let port else { throw TestSetupError("the daemon did not start listening; stderr: \(stderr)") }
        return port
    }

    /// Sends a signal to the process.
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Runs to completion.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], executable: String = DaemonProcess.binary
    ) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let daemon = try DaemonProcess(arguments, environment: environment, executable: executable)
        let status = try await daemon.wait()
        return (status, daemon.stdout, daemon.stderr)
    }
}

/// What a child process printed, appended to from the pipes' reading threads.
final class OutputBuffer: Sendable {
    let text = Mutex<(stdout: String, stderr: String)>(("", ""))
}
