import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PortcullisCore
public import PortcullisJSON
import ServiceLifecycle
import Synchronization

/// A real HTTP server on 127.0.0.1 that records the webhook deliveries it receives, and
/// can be told to fail the next few (503) to exercise retries.
public final class WebhookReceiver: Sendable {
    /// One request as received.
    public struct Delivery: Sendable {
        /// The raw body.
        public let body: [UInt8]
        /// The `Portcullis-Signature` header.
        public let signature: String?
        /// The `Portcullis-Message-Id` header.
        public let messageId: String?

        /// The body as JSON.
        public var json: JSONValue { (try? JSONValue.parse(body)) ?? .null }

        /// The `link` field of the body.
        public var link: String? {
            if case .string(let link)? = json.value(at: ["link"]) { link } else { nil }
        }

        /// The `oobCode` of the link.
        public var oobCode: String? {
            link.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "oobCode" }?.value }
        }
    }

    private struct State {
        var accepted: [Delivery] = []
        var refused = 0
        var failuresLeft = 0
    }

    private let state = Mutex(State())
    /// `http://127.0.0.1:PORT/hook`.
    public let url: String

    private init(url: String) {
        self.url = url
    }

    /// Deliveries answered 200, in arrival order.
    public var accepted: [Delivery] { state.withLock { $0.accepted } }
    /// Requests answered 503.
    public var refused: Int { state.withLock { $0.refused } }

    /// Makes the next `count` requests fail with 503.
    public func fail(next count: Int) {
        state.withLock { $0.failuresLeft = count }
    }

    /// Waits (up to `timeout`) until `count` deliveries were accepted; returns them.
    public func waitForDeliveries(_ count: Int, timeout: Duration = .seconds(20)) async throws -> [Delivery] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let accepted = self.accepted
            if accepted.count >= count { return accepted }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestSetupError("expected \(count) webhook deliveries, got \(accepted.count) (refused \(refused))")
    }

    private func receive(_ request: Request, body: [UInt8]) -> HTTPResponse.Status {
        state.withLock { state in
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                state.refused += 1
                return .serviceUnavailable
            }
            state.accepted.append(
                Delivery(
                    body: body, signature: request.headers[HTTPField.Name("Portcullis-Signature")!],
                    messageId: request.headers[HTTPField.Name("Portcullis-Message-Id")!]))
            return .ok
        }
    }

    /// Starts a receiver, runs `body` with it, and stops it.
    public static func run<T: Sendable>(_ body: (WebhookReceiver) async throws -> T) async throws -> T {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let receiver = Mutex<WebhookReceiver?>(nil)
        let router = Router()
        router.post("hook") { request, context -> Response in
            let bytes = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            guard let target = receiver.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return Response(status: target.receive(request, body: bytes))
        }
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { portContinuation.finish() }
                try await services.run()
            }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else { throw TestSetupError("the webhook receiver did not start") }
            let started = WebhookReceiver(url: "http://127.0.0.1:\(port)/hook")
            receiver.withLock { $0 = started }
            let result: Result<T, any Error>
            do {
                result = .success(try await body(started))
            } catch {
                result = .failure(error)
            }
            // Graceful first, as FakeIdentityProvider does: the socket closes before anything is cancelled.
            await services.triggerGracefulShutdown()
            try? await Task.sleep(for: .milliseconds(300))
            return try result.get()
        }
    }
}
