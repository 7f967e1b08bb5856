import HTTPTypes
public import Hummingbird
import PortcullisCore
import PortcullisCrypto

/// End-user routes need a configured API key in `?key=` or `X-Goog-Api-Key`.
///
/// API keys identify the calling app, as in Firebase; they are not secrets,
/// but are still compared by hash so the comparison's timing says nothing.
public struct APIKeyMiddleware: RouterMiddleware {
    public typealias Context = PortcullisRequestContext

    private let keyHashes: [[UInt8]]
    private static let header = HTTPField.Name("X-Goog-Api-Key")

    /// Accepts any of `keys`.
    public init(keys: [String]) {
        keyHashes = keys.map(SecretToken.hash)
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let presented = request.query("key") ?? Self.header.flatMap({ request.headers[$0] }) else {
            throw AuthError(.apiKeyInvalid)
        }
        let hash = SecretToken.hash(presented)
        // Check every key so the time does not depend on which one matched.
        let matched = keyHashes.reduce(false) { $0 || SecretToken.constantTimeEquals($1, hash) }
        guard matched else { throw AuthError(.apiKeyInvalid) }
        return try await next(request, context)
    }
}
