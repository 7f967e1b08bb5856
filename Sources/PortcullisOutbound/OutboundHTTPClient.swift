import AsyncHTTPClient
public import Logging
public import NIOCore
import NIOHTTP1
public import NIOPosix
import NIOSSL
import PortcullisCore

/// The one way Portcullis calls other servers (identity providers' JWKS and user-info
/// endpoints; webhooks later), under the operator's network policy.
///
/// Each request: parse the URL; resolve the host (IP literals are taken as they are);
/// refuse unless the policy allows *every* resolved address for the URL's scheme; then
/// connect to the first of them with the connection pinned to it (async-http-client's
/// `dnsOverride` maps the host to that address while SNI and certificate validation
/// still use the host name), so a DNS answer that changes after the check cannot send
/// the request elsewhere. Redirects are never followed. The whole exchange runs under
/// ``Configuration/deadline`` and the body under ``Configuration/maximumBodySize``.
///
/// Every request uses its own short-lived `HTTPClient` on the shared event-loop group,
/// because `dnsOverride` belongs to a client's configuration; callers cache what they
/// fetch (JWKS) or call rarely (user-info), so the lost connection reuse is cheap.
public struct OutboundHTTPClient: Sendable {
    /// The limits and the policy.
    public let configuration: Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let resolver: any HostResolver
    private let logger: Logger

    /// A client; `resolver` is injectable so tests can make a name resolve to chosen addresses.
    public init(
        configuration: Configuration = Configuration(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        resolver: any HostResolver = SystemHostResolver(),
        logger: Logger = Logger(label: "portcullis.outbound")
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.resolver = resolver
        self.logger = logger
    }

    /// GETs `url`, returning a complete 2xx answer; anything else is an ``OutboundFailure``.
    public func get(_ url: String, headers: [(String, String)] = []) async throws(OutboundFailure) -> OutboundResponse {
        try await perform(method: .GET, url: url, headers: headers, body: nil)
    }

    /// POSTs `body` to `url` (for webhooks), returning a complete 2xx answer.
    public func post(
        _ url: String, headers: [(String, String)] = [], body: [UInt8]
    ) async throws(OutboundFailure)
        -> OutboundResponse
    {
        try await perform(method: .POST, url: url, headers: headers, body: body)
    }

    private func perform(
        method: HTTPMethod, url: String, headers: [(String, String)], body: [UInt8]?
    )
        async throws(OutboundFailure) -> OutboundResponse
    {
        let target = try OutboundTarget(url)
        let limit = configuration.deadline
        do {
            return try await Self.within(limit, host: target.host) {
                try await exchange(method: method, url: url, target: target, headers: headers, body: body)
            }
        } catch let failure as OutboundFailure {
            logger.debug("outbound request failed", metadata: ["host": "\(target.host)", "reason": "\(failure.logDescription)"])
            throw failure
        } catch {
            // Only OutboundFailure escapes `exchange`; anything else is a cancelled caller.
            throw OutboundFailure(host: target.host, kind: .timedOut)
        }
    }

    /// Resolves, checks, connects pinned, and reads the answer.
    private func exchange(
        method: HTTPMethod, url: String, target: OutboundTarget, headers: [(String, String)], body: [UInt8]?
    ) async throws(OutboundFailure) -> OutboundResponse {
        let addresses: [IPAddress]
        if let literal = target.literal {
            addresses = [literal]
        } else {
            addresses = try await resolver.addresses(of: target.host)
        }
        if case .refuse(let reason) = configuration.policy.decide(scheme: target.scheme, addresses: addresses) {
            throw OutboundFailure(host: target.host, kind: .refusedByPolicy(reason: reason))
        }
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: configuration.tlsConfiguration, redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(
                connect: .nanoseconds(configuration.connectTimeout.nanoseconds),
                read: .nanoseconds(configuration.deadline.nanoseconds)),
            proxy: nil, decompression: .disabled)
        if target.literal == nil, let pinned = addresses.first {
            clientConfiguration.dnsOverride = [target.host: pinned.description]
        }
        let client = HTTPClient(
            eventLoopGroup: eventLoopGroup, configuration: clientConfiguration, backgroundActivityLogger: logger)
        let outcome: Result<OutboundResponse, OutboundFailure>
        do {
            outcome = .success(try await send(method: method, url: url, target: target, headers: headers, body: body, with: client))
        } catch let failure as OutboundFailure {
            outcome = .failure(failure)
        } catch {
            outcome = .failure(Self.failure(for: error, url: url, host: target.host))
        }
        // Ends the connection whatever happened (a body abandoned past the cap included).
        try? await client.shutdown()
        return try outcome.get()
    }

    private func send(
        method: HTTPMethod, url: String, target: OutboundTarget, headers: [(String, String)], body: [UInt8]?,
        with client: HTTPClient
    ) async throws -> OutboundResponse {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !request.headers.contains(name: "User-Agent") {
            request.headers.add(name: "User-Agent", value: configuration.userAgent)
        }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(
            request, deadline: .now() + .nanoseconds(configuration.deadline.nanoseconds), logger: logger)
        let status = Int(response.status.code)
        switch status {
        case 200..<300: break
        case 300..<400: throw OutboundFailure(host: target.host, kind: .redirected(status: status))
        default: throw OutboundFailure(host: target.host, kind: .badStatus(status))
        }
        let cap = configuration.maximumBodySize
        if let declared = response.headers.first(name: "Content-Length").flatMap(Int.init), declared > cap {
            throw OutboundFailure(host: target.host, kind: .tooLarge(limit: cap))
        }
        var bytes: [UInt8] = []
        for try await chunk in response.body {
            guard bytes.count + chunk.readableBytes <= cap else {
                throw OutboundFailure(host: target.host, kind: .tooLarge(limit: cap))
            }
            bytes.append(contentsOf: chunk.readableBytesView)
        }
        return OutboundResponse(status: status, headers: response.headers.map { ($0.name, $0.value) }, body: bytes)
    }

    /// Runs `operation`, cancelling it (and answering ``OutboundFailure/Kind/timedOut``)
    /// when `limit` passes first.
    private static func within(
        _ limit: Duration, host: String, _ operation: @escaping @Sendable () async throws -> OutboundResponse
    ) async throws -> OutboundResponse {
        try await withThrowingTaskGroup(of: OutboundResponse?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else {
                throw OutboundFailure(host: host, kind: .timedOut)
            }
            return response
        }
    }

    /// An async-http-client or NIO error as a failure naming the host (the error's text
    /// can contain the URL, whose query may hold a secret, so it is never passed on).
    private static func failure(for error: any Error, url: String, host: String) -> OutboundFailure {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout:
                return OutboundFailure(host: host, kind: .timedOut)
            case .remoteConnectionClosed:
                return OutboundFailure(host: host, kind: .unreachable(reason: "the connection closed early"))
            case .cancelled:
                return OutboundFailure(host: host, kind: .timedOut)
            case .invalidURL, .emptyHost, .emptyScheme:
                return OutboundFailure(host: host, kind: .invalidURL)
            default:
                break
            }
        }
        if error is CancellationError { return OutboundFailure(host: host, kind: .timedOut) }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return OutboundFailure(host: host, kind: .timedOut)
        }
        if error is NIOConnectionError {
            return OutboundFailure(host: host, kind: .unreachable(reason: "the connection failed"))
        }
        if error is NIOSSLError || error is NIOSSLExtraError {
            return OutboundFailure(host: host, kind: .unreachable(reason: "TLS failed: \(error)"))
        }
        let text = String(describing: error)
        let reason = text.contains(url) || text.contains("?") ? String(describing: type(of: error)) : text
        return OutboundFailure(host: host, kind: .unreachable(reason: reason))
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
