import Foundation
import PortcullisTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The built `portcullis` binary, run as a child process.
final class DaemonProcess: Sendable {
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["PORTCULLIS_BINARY"] { return path }
        // Tests/PortcullisCLITests/<file> → package root → .build/debug/portcullis
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/portcullis").path
    }

    let process = Process()
    private let output = OutputBuffer()

    /// Starts `portcullis <arguments>` with only `environment` (plus PATH and HOME).
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Self.binary)
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

    var stdout: String { output.text.withLock { $0.stdout } }
    var stderr: String { output.text.withLock { $0.stderr } }

    /// Waits for exit (killing the process after `timeout`) and returns its status.
    func wait(timeout: Duration = .seconds(60)) async throws -> Int32 {
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

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Runs to completion.
    static func run(
        _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let daemon = try DaemonProcess(arguments, environment: environment)
        let status = try await daemon.wait()
        return (status, daemon.stdout, daemon.stderr)
    }
}

final class OutputBuffer: Sendable {
    let text = Mutex<(stdout: String, stderr: String)>(("", ""))
}

/// A Unix datagram socket standing in for systemd's `$NOTIFY_SOCKET`.
final class NotifySocket {
    let path: String
    private let descriptor: Int32

    init() throws {
        path = NSTemporaryDirectory() + "portcullis-notify-\(UUID().uuidString.prefix(8)).sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSetupError("socket() failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw TestSetupError("bind(\(path)) failed: \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Waits for a datagram containing `state`; returns false on timeout.
    func await(_ state: String, timeout: Duration) async throws -> Bool {
        let start = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now - start < timeout {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0, String(decoding: buffer[0..<count], as: UTF8.self).contains(state) { return true }
            await Task.yield()
        }
        return false
    }
}
