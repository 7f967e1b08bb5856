public import Hummingbird
import PortcullisCore

/// The outermost responder: emulator prefixes and request metrics.
///
/// Wrapping the router (rather than being a router middleware) means every
/// request is counted, unmatched ones included. Errors are rendered by
/// ``ErrorEnvelopeMiddleware`` inside the router; this only catches what
/// escapes it.
public struct PortcullisResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == PortcullisRequestContext {
    public typealias Context = PortcullisRequestContext

    /// Path prefixes Firebase SDKs use when pointed at an emulator host.
    static var emulatorPrefixes: [String] { ["/identitytoolkit.googleapis.com", "/securetoken.googleapis.com"] }

    let inner: Inner
    let metrics: HTTPMetrics

    /// Wraps the router's responder.
    public init(inner: Inner, metrics: HTTPMetrics) {
        self.inner = inner
        self.metrics = metrics
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let request = Self.strippingEmulatorPrefix(request)
        let response: Response
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > context.maxUploadSize {
            // Refused from the head alone: the client (waiting on `Expect: 100-continue`, or not)
            // need not send a body that would be refused anyway.
            var refusal = AuthError(.payloadTooLarge, detail: "Request body exceeds \(context.maxUploadSize) bytes").envelopeResponse()
            refusal.headers[.connection] = "close"
            response = refusal
        } else {
            do {
                response = try await inner.respond(to: request, context: context)
            } catch {
                response = AuthError(translating: error, logger: context.logger).envelopeResponse()
            }
        }
        metrics.record(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue,
            status: response.status.code, duration: ContinuousClock.now - start)
        return response
    }

    static func strippingEmulatorPrefix(_ request: Request) -> Request {
        guard let path = request.head.path,
            let prefix = emulatorPrefixes.first(where: { path.hasPrefix($0 + "/") })
        else { return request }
        var head = request.head
        head.path = String(path.dropFirst(prefix.count))
        return Request(head: head, body: request.body)
    }
}
