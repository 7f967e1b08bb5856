public import Hummingbird
public import PortcullisCore

/// Renders `AuthError` as Google's error envelope — the one place wire errors are produced.
///
/// ```json
/// {"error":{"code":400,"message":"EMAIL_EXISTS",
///   "errors":[{"message":"EMAIL_EXISTS","domain":"global","reason":"invalid"}]}}
/// ```
extension AuthError: HTTPResponseError {
    public var status: HTTPResponse.Status { .init(code: httpStatus) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        envelopeResponse()
    }

    /// The envelope as a response, without needing a request.
    public func envelopeResponse() -> Response {
        let envelope = ErrorEnvelope(
            error: .init(
                code: httpStatus, message: message, status: rpcStatus,
                errors: [.init(message: message, domain: "global", reason: reason)]))
        var response =
            (try? CompactJSONResponseEncoder.response(envelope, status: status))
            // Unreachable (the envelope is strings and a number); an error must still answer.
            ?? Response(status: status)
        if code == .unauthenticated { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}

/// Google's error envelope.
struct ErrorEnvelope: Encodable {
    struct Body: Encodable {
        let code: Int
        let message: String
        let status: String?
        let errors: [Item]
    }

    struct Item: Encodable {
        let message: String
        let domain: String
        let reason: String
    }

    let error: Body
}
