import Foundation
public import Hummingbird
public import PortcullisVerifier

/// Verifies the request's `Authorization: Bearer <ID token>` and puts whom it identifies in
/// the context's ``VerifiedIdentityRequestContext/identity`` before calling the next responder.
///
/// ```swift
/// let router = Router(context: BasicVerifiedIdentityRequestContext.self)
/// router.add(middleware: VerifiedIdentityMiddleware(verifier: verifier))
/// router.get("me") { _, context in try context.requireIdentity().uid }
/// ```
///
/// It answers by itself, never with a 500:
/// - 401 when the header is missing (unless ``requiresIdentity`` is `false`) or is not a bearer
///   token, with `WWW-Authenticate: Bearer`;
/// - 401 when the token is refused (forged, expired, another tenant's, revoked), with
///   `WWW-Authenticate: Bearer error="invalid_token", error_description="…"`;
/// - 503 when the gateway cannot be reached for keys or a revocation check.
///
/// The body is a small JSON object, `{"error": "invalid_token", "error_description": "…"}`;
/// it never echoes the token.
public struct VerifiedIdentityMiddleware<Context: RequestContext & VerifiedIdentityRequestContext>: RouterMiddleware {
    /// The verifier every request's token goes through.
    public let verifier: IDTokenVerifier
    /// Whether each request also asks the gateway whether the session was revoked (one
    /// request to the gateway per request served).
    public let checkRevoked: Bool
    /// Whether a request without an `Authorization` header is refused (`true`) or passed on
    /// with no identity (`false`; a present but invalid token is refused either way).
    public let requiresIdentity: Bool

    /// A middleware verifying with `verifier`.
    public init(verifier: IDTokenVerifier, checkRevoked: Bool = false, requiresIdentity: Bool = true) {
        self.verifier = verifier
        self.checkRevoked = checkRevoked
        self.requiresIdentity = requiresIdentity
    }

    /// Verifies the bearer token, then calls `next` with the identity in the context.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            if requiresIdentity { return Self.refusal(.unauthorized, error: nil, description: "an ID token is required") }
            return try await next(request, context)
        }
        guard let token = Self.bearerToken(header) else {
            return Self.refusal(.unauthorized, error: "invalid_request", description: "the Authorization header is not a bearer token")
        }
        var context = context
        do {
            context.identity = try await verifier.verify(token, checkRevoked: checkRevoked)
        } catch {
            if error.isUnavailable {
                return Self.refusal(.serviceUnavailable, error: "temporarily_unavailable", description: error.description)
            }
            return Self.refusal(.unauthorized, error: "invalid_token", description: error.description)
        }
        return try await next(request, context)
    }

    /// The token of `Bearer <token>` (scheme in any case), or `nil`.
    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }

    private struct RefusalBody: Encodable {
        let error: String
        let errorDescription: String

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }

    /// A 401 or 503 with its JSON body; `error` is the RFC 6750 code (`nil` when no credentials
    /// were sent, where RFC 6750 §3.1 wants none in the challenge).
    static func refusal(_ status: HTTPResponse.Status, error: String?, description: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if status == .unauthorized {
            headers[.wwwAuthenticate] =
                error.map { #"Bearer error="\#($0)", error_description="\#(description)""# } ?? "Bearer"
        }
        let body = RefusalBody(error: error ?? "missing_token", errorDescription: description)
        let json = (try? JSONEncoder().encode(body)) ?? Data(#"{"error":"invalid_token"}"#.utf8)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}
