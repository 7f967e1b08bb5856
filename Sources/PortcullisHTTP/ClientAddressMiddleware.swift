import HTTPTypes
public import Hummingbird
public import PortcullisCore

/// Reads the client's address through the operator's trusted proxies (`trusted_proxies`).
///
/// Installed only when trusted proxies are configured: without them `X-Forwarded-For`
/// is never read, since any client can write it.
public struct ClientAddressMiddleware: RouterMiddleware {
    public typealias Context = PortcullisRequestContext

    private let trustedProxies: [IPNetwork]
    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!  // safe: constant, valid

    /// Trusts `X-Forwarded-For` from peers in `trustedProxies`.
    public init(trustedProxies: [IPNetwork]) {
        self.trustedProxies = trustedProxies
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.forwardedClient = ClientAddress.resolve(
            peer: context.peerAddress.flatMap { IPAddress($0) }, forwardedFor: request.headers[values: Self.forwardedFor],
            trustedProxies: trustedProxies)
        return try await next(request, context)
    }
}
