public import Hummingbird
import PortcullisCore

/// Refuses a request whose `Content-Length` is over the body limit from its head alone, with
/// 413 and the envelope, before any handler reads the body.
///
/// The client (waiting on `Expect: 100-continue`, which `ExpectContinueHandler` does not
/// answer for such a body, or not) need not send a body that would be refused anyway; the
/// connection is closed after the answer, since the body may follow all the same. A body
/// without a declared length (chunked) is refused by the decoder once it passes the limit.
///
/// A router middleware, second after ``BrowserCORSMiddleware``, so a web app reads the 413
/// like any other error.
public struct DeclaredLengthMiddleware: RouterMiddleware {
    public typealias Context = PortcullisRequestContext

    /// The middleware (the limit is the context's `maxUploadSize`).
    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let length = request.headers[.contentLength].flatMap({ Int($0) }), length > context.maxUploadSize else {
            return try await next(request, context)
        }
        var refusal = AuthError(.payloadTooLarge, detail: "Request body exceeds \(context.maxUploadSize) bytes").envelopeResponse()
        refusal.headers[.connection] = "close"
        return refusal
    }
}
