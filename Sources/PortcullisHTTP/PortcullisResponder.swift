public import Hummingbird
import PortcullisCore
import PortcullisStore

/// The outermost responder: emulator prefixes, legacy v3 paths, cross-origin requests,
/// bodies declared too large, and request metrics.
///
/// Wrapping the router (rather than being router middleware) means every request is
/// counted, unmatched ones included, and that a request without an `Origin` (servers,
/// proxies, SDKs: nearly all of them) pays for no CORS layer: each router middleware layer
/// cost `/v1/verify` about 6 % (BENCHMARKS.md). Errors are rendered by
/// ``ErrorEnvelopeMiddleware`` inside the router; this only catches what escapes it.
public struct PortcullisResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == PortcullisRequestContext {
    public typealias Context = PortcullisRequestContext

    /// Path prefixes Firebase SDKs use when pointed at an emulator host.
    static var emulatorPrefixes: [String] { ["/identitytoolkit.googleapis.com", "/securetoken.googleapis.com"] }

    let inner: Inner
    let metrics: HTTPMetrics
    /// `database.request_timeout`: the database budget of each request.
    let databaseTimeout: Duration
    /// The CORS policy, for requests that name an `Origin`.
    let cors = BrowserCORSMiddleware()

    /// Wraps the router's responder; each request's database calls share `databaseTimeout`.
    public init(inner: Inner, metrics: HTTPMetrics, databaseTimeout: Duration) {
        self.inner = inner
        self.metrics = metrics
        self.databaseTimeout = databaseTimeout
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        // However many database calls the request makes, they wait at most the timeout together.
        try await Database.$requestBudget.withValue(RequestBudget(databaseTimeout)) {
            try await serve(request, context: context)
        }
    }

    private func serve(_ request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let request = Self.rewritingAliases(request)
        // Only a browser names an origin; `answer` never throws, so every answer, errors
        // included, reaches the CORS policy as a response.
        let response =
            request.headers.contains(.origin)
            ? try await cors.handle(request, context: context) { request, context in await answer(request, context) }
            : await answer(request, context)
        metrics.record(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue,
            status: response.status.code, duration: ContinuousClock.now - start)
        // Only a success proves the tenant exists: a made-up id never becomes a series.
        if (200..<300).contains(response.status.code), let tenant = context.tenant.id {
            metrics.recordTenantRequest(tenant)
        }
        return response
    }

    /// The router's answer, errors rendered as the envelope; or 413 from the head alone.
    private func answer(_ request: Request, _ context: Context) async -> Response {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > context.maxUploadSize {
            return Self.refusal(context)
        }
        do {
            return try await inner.respond(to: request, context: context)
        } catch {
            return AuthError(translating: error, logger: context.logger).envelopeResponse()
        }
    }

    /// 413 from the head alone: the client (waiting on `Expect: 100-continue`, which
    /// ``ExpectContinueHandler`` does not answer for such a body, or not) need not send a body
    /// that would be refused anyway; the connection is closed after the answer, since the
    /// body may follow all the same. A body without a declared length (chunked) is refused
    /// by the decoder once it passes the limit.
    private static func refusal(_ context: Context) -> Response {
        var refusal = AuthError(.payloadTooLarge, detail: "Request body exceeds \(context.maxUploadSize) bytes").envelopeResponse()
        refusal.headers[.connection] = "close"
        return refusal
    }

    /// The request with an emulator prefix removed and a legacy v3 path (``LegacyPaths``)
    /// turned into its v1 operation's, so each operation has one route whatever path reached it.
    static func rewritingAliases(_ request: Request) -> Request {
        guard let path = request.head.path else { return request }
        var rewritten = path
        if let prefix = emulatorPrefixes.first(where: { path.hasPrefix($0 + "/") }) {
            rewritten = String(path.dropFirst(prefix.count))
        }
        if let v1 = LegacyPaths.v1Path(for: rewritten) { rewritten = v1 }
        guard rewritten != path else { return request }
        var head = request.head
        head.path = rewritten
        return Request(head: head, body: request.body)
    }
}
