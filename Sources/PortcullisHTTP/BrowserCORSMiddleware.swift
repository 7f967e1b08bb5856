import HTTPTypes
public import Hummingbird

/// Cross-origin access for the paths a web app calls from its own origin: the end-user API
/// (`/v1/accounts:*`, `/v1/token`, `/v1/projects`, and the v2 `passwordPolicy`, `recaptchaConfig`
/// and `accounts:revokeToken`) that Firebase's JavaScript SDK calls, and the public key documents
/// (JWKS, OpenID discovery).
///
/// Any origin may call them, as with Google's front end and the Firebase emulator: they take no
/// ambient credential (no cookie; the API key and the tokens travel in the request itself), so
/// a page on another origin can do nothing through a visitor's browser that it could not do
/// with curl. Answers name the calling origin and never allow credentials. A preflight is
/// answered before the API-key check, as the CORS protocol requires (a browser sends it without
/// the request's headers). Every other path (admin `/v2/…` and `/v1/projects/{p}/…`,
/// `/v1/verify`, health and metrics) gets no CORS header, so a browser neither lets a page read
/// it nor sends it a preflighted request. Errors carry the headers too: a web app reads the
/// envelope's code (`EMAIL_EXISTS`) from them.
///
/// ``PortcullisResponder`` applies it around the router, to requests that name an `Origin`,
/// with errors already rendered as responses; unmatched requests (a preflight matches no
/// route) pass through it too.
public struct BrowserCORSMiddleware: RouterMiddleware {
    public typealias Context = PortcullisRequestContext

    /// The headers Firebase's web SDK sends (`packages/auth/src/api/index.ts`) and the API-key header.
    static let allowedHeaders: [HTTPField.Name] = [
        .accept, .contentType, .googleAPIKey,
        HTTPField.Name("X-Client-Version")!,  // safe: constant, valid
        HTTPField.Name("X-Firebase-Locale")!,  // safe: constant, valid
        HTTPField.Name("X-Firebase-GMPID")!,  // safe: constant, valid
        HTTPField.Name("X-Firebase-Client")!,  // safe: constant, valid
        HTTPField.Name("X-Firebase-AppCheck")!,  // safe: constant, valid
    ]

    private let cors = CORSMiddleware<Context>(
        allowOrigin: .originBased, allowHeaders: Self.allowedHeaders, allowMethods: [.get, .post, .options],
        allowCredentials: false,
        // Chromium caps a cached preflight at two hours.
        maxAge: .hours(2))

    /// The middleware (its policy is fixed: see the type's documentation).
    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard Self.servesBrowsers(path: request.uri.path) else {
            return try await next(request, context)
        }
        return try await cors.handle(request, context: context, next: next)
    }

    /// The Identity Toolkit v2 calls of the client SDKs (the admin API nests under `/v2/projects/{p}/`).
    static let clientV2Paths: Set<String> = ["/v2/passwordPolicy", "/v2/recaptchaConfig", "/v2/accounts:revokeToken"]

    /// Whether a page on another origin may call `path` (emulator prefixes and legacy v3 paths
    /// already rewritten to their v1 operation by ``PortcullisResponder``).
    static func servesBrowsers(path: String) -> Bool {
        if path.hasSuffix("/jwks") || path.hasSuffix("/.well-known/openid-configuration") { return true }
        if clientV2Paths.contains(path) { return true }
        // The end-user API is one segment under /v1; the admin API nests under /v1/projects/{p}/.
        guard path.hasPrefix("/v1/") else { return false }
        let operation = path.dropFirst("/v1/".count)
        return !operation.isEmpty && !operation.contains("/") && operation != "verify"
    }
}
