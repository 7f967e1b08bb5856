public import Hummingbird
public import PortcullisCore
import Synchronization

/// The request context of every Portcullis route.
public struct PortcullisRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The admin caller, set by ``AdminAuthenticator`` on admin routes.
    public var admin: AdminPrincipal?

    /// DESIGN.md §2: bodies over 1 MiB are refused with 413.
    public static let maximumBodyBytes = 1 << 20

    /// ``maximumBodyBytes``.
    public var maxUploadSize: Int { Self.maximumBodyBytes }

    /// Request bodies are read with Identity Toolkit's leniency.
    public var requestDecoder: LenientRequestDecoder { LenientRequestDecoder() }
    /// Responses are compact JSON.
    public var responseEncoder: CompactJSONResponseEncoder { CompactJSONResponseEncoder() }

    /// The tenant the request acts for, once the route knows it (an admin path, a body's
    /// `tenantId`, a token); ``PortcullisResponder`` counts successful requests by it.
    let tenant = RequestTenant()

    /// The TCP peer's address.
    public let peerAddress: String?
    /// The client as ``ClientAddressMiddleware`` resolved it behind trusted proxies.
    var forwardedClient: IPAddress?

    /// The client's address, for the abuse limits: the TCP peer, unless a trusted proxy
    /// forwarded the request (``ClientAddressMiddleware``).
    public var clientAddress: IPAddress? { forwardedClient ?? peerAddress.flatMap { IPAddress($0) } }

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The authenticated admin, authorised for `target`.
    ///
    /// `UNAUTHENTICATED` when the route was reached without a key (a wiring
    /// error, not a caller's), `PERMISSION_DENIED` when the key's scope does not
    /// cover the target.
    public func requireAdmin(for target: AdminTarget) throws(AuthError) -> AdminPrincipal {
        guard let admin else { throw AuthError(.unauthenticated) }
        try admin.authorize(target)
        return admin
    }
}

/// The tenant of one request, shared by every copy of its context: the route that learns it
/// writes it, the outermost responder reads it afterwards.
final class RequestTenant: Sendable {
    private let value = Mutex<String?>(nil)

    /// The tenant, `nil` while unknown or for project users.
    var id: String? { value.withLock { $0 } }

    /// Records the tenant the request names (nothing for project users). The first one
    /// named stays: on admin routes the path's, which a body's `tenantId` never overrides.
    func set(_ tenant: TenantScope) {
        guard case .tenant(let id) = tenant else { return }
        value.withLock { if $0 == nil { $0 = id } }
    }
}
