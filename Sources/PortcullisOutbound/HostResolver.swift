public import NIOPosix
public import PortcullisCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a host name into the addresses a connection could use; the outbound client
/// checks every one of them against the network policy.
public protocol HostResolver: Sendable {
    /// Every address `host` resolves to (IPv4 and IPv6); throws
    /// ``OutboundFailure/Kind/unreachable(reason:)`` when it resolves to none. Returns
    /// promptly when the calling task is cancelled, even if the lookup itself does not.
    func addresses(of host: String) async throws(OutboundFailure) -> [IPAddress]
}

/// The system's resolver (`getaddrinfo`: /etc/hosts, then DNS), run on NIO's blocking
/// thread pool so a slow DNS server never stalls an event loop.
public struct SystemHostResolver: HostResolver {
    private let threadPool: NIOThreadPool

    /// A resolver on `threadPool` (default: NIO's shared blocking pool).
    public init(threadPool: NIOThreadPool = .singleton) {
        self.threadPool = threadPool
    }

    public func addresses(of host: String) async throws(OutboundFailure) -> [IPAddress] {
        // getaddrinfo cannot be interrupted: on cancellation (the request's deadline) the
        // caller is answered at once and the lookup finishes unobserved on its thread.
        let answer = FirstAnswer<Result<[IPAddress], OutboundFailure>>()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[IPAddress], OutboundFailure>, Never>) in
                answer.wait(continuation)
                threadPool.submit { state in
                    switch state {
                    case .active: answer.give(Self.lookUp(host))
                    case .cancelled: answer.give(.failure(OutboundFailure(host: host, kind: .unreachable(reason: "resolver stopped"))))
                    }
                }
            }
        } onCancel: {
            answer.give(.failure(OutboundFailure(host: host, kind: .timedOut)))
        }
        return try result.get()
    }

    /// Blocking `getaddrinfo` for TCP, both families.
    private static func lookUp(_ host: String) -> Result<[IPAddress], OutboundFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
            return .failure(OutboundFailure(host: host, kind: .unreachable(reason: "cannot resolve: \(reason)")))
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr.flatMap(Self.address(of:)), !addresses.contains(address) {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(OutboundFailure(host: host, kind: .unreachable(reason: "cannot resolve: no address")))
        }
        return .success(addresses)
    }

    /// The address of an `AF_INET`/`AF_INET6` socket address, through its text form.
    private static func address(of socketAddress: UnsafeMutablePointer<sockaddr>) -> IPAddress? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written: UnsafePointer<CChar>?
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            written = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                var raw = pointer.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count))
            }
        case AF_INET6:
            written = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                var raw = pointer.pointee.sin6_addr
                return inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count))
            }
        default:
            return nil
        }
        guard written != nil else { return nil }
        return IPAddress(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// A continuation resumed by whichever answer comes first (the lookup or cancellation),
/// including an answer that comes before anyone waits.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, Never>)
        case answered(Value)
        case done
    }

    private let state = Mutex<State>(.empty)

    func wait(_ continuation: CheckedContinuation<Value, Never>) {
        let early: Value? = state.withLock { state in
            switch state {
            case .answered(let value):
                state = .done
                return value
            default:
                state = .waiting(continuation)
                return nil
            }
        }
        if let early { continuation.resume(returning: early) }
    }

    func give(_ value: Value) {
        let waiting: CheckedContinuation<Value, Never>? = state.withLock { state in
            switch state {
            case .empty:
                state = .answered(value)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .answered, .done:
                return nil
            }
        }
        waiting?.resume(returning: value)
    }
}
