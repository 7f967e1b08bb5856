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

    /// Accepts any of `keys`.
    public init(keys: [String]) {
        keyHashes = keys.map(SecretToken.hash)
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let presented = request.apiKey, accepts(presented) else { throw AuthError(.apiKeyInvalid) }
        return try await next(request, context)
    }

    /// Whether `presented` is one of the configured keys.
    func accepts(_ presented: String) -> Bool {
        let hash = SecretToken.hash(presented)
        // Check every key so the time does not depend on which one matched.
        return keyHashes.reduce(false) { $0 || SecretToken.constantTimeEquals($1, hash) }
    }
}

extension HTTPField.Name {
    /// Where Firebase clients may put the API key instead of `?key=`.
    static let googleAPIKey = HTTPField.Name("X-Goog-Api-Key")!  // safe: constant, valid
}

extension Request {
    /// The API key the request presents, in `?key=` or `X-Goog-Api-Key`.
    var apiKey: String? {
        query("key") ?? headers[.googleAPIKey]
    }
}
