public import Hummingbird
public import PortcullisCore

/// Renders ``AuthError`` as Google's error envelope — the one place wire errors are produced.
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
        var error: [String: JSONValue] = [
            "code": .integer(Int64(httpStatus)),
            "message": .string(message),
            "errors": .array([
                .object(["message": .string(message), "domain": .string("global"), "reason": .string(reason)])
            ]),
        ]
        if let rpcStatus { error["status"] = .string(rpcStatus) }
        var response = JSONResponse.make(.object(["error": .object(error)]), status: status)
        if code == .unauthenticated { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}
