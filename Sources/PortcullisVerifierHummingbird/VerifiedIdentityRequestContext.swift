public import Hummingbird
public import PortcullisVerifier

/// A request context that carries the identity ``VerifiedIdentityMiddleware`` verified.
///
/// ```swift
/// struct AppContext: RequestContext, VerifiedIdentityRequestContext {
///     var coreContext: CoreRequestContextStorage
///     var identity: VerifiedIdentity?
///     init(source: ApplicationRequestContextSource) {
///         coreContext = .init(source: source)
///     }
/// }
/// ```
public protocol VerifiedIdentityRequestContext {
    /// The verified identity of the request's bearer token; `nil` before the middleware ran,
    /// or when it lets requests without a token through.
    var identity: VerifiedIdentity? { get set }
}

extension VerifiedIdentityRequestContext {
    /// The verified identity, or a 401 for a handler behind a middleware that lets requests
    /// without a token through.
    public func requireIdentity() throws -> VerifiedIdentity {
        guard let identity else {
            throw HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: "an ID token is required")
        }
        return identity
    }
}

/// A ready-made request context with an ``VerifiedIdentityRequestContext/identity``, for
/// applications that need nothing else in theirs.
public struct BasicVerifiedIdentityRequestContext: RequestContext, VerifiedIdentityRequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The verified identity; `nil` until ``VerifiedIdentityMiddleware`` sets it.
    public var identity: VerifiedIdentity?

    /// A context for a new request.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.identity = nil
    }
}
