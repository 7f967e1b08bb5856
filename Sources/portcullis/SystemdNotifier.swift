import Foundation
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// systemd's `sd_notify` protocol: one datagram to `$NOTIFY_SOCKET`, no libsystemd.
enum SystemdNotifier {
    /// Sends `state` (e.g. `READY=1`); does nothing when not run by systemd.
    @discardableResult
    static func notify(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return false }
        var pathBytes = Array(path.utf8)
        // A leading '@' names an abstract-namespace socket.
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in buffer.copyBytes(from: pathBytes) }
        #if canImport(Darwin)
        let socketType = SOCK_DGRAM
        #else
        let socketType = Int32(SOCK_DGRAM.rawValue)
        #endif
        let descriptor = socket(AF_UNIX, socketType, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, message, message.count, 0, socketAddress, length)
            }
        }
        return sent == message.count
    }
}

/// Tells systemd `STOPPING=1` as soon as graceful shutdown begins.
struct SystemdStoppingNotifier: Service {
    func run() async throws {
        try? await gracefulShutdown()
        SystemdNotifier.notify("STOPPING=1")
    }
}
