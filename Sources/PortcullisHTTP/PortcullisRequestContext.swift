public import Hummingbird
public import PortcullisCore

/// The request context of every Portcullis route.
public struct PortcullisRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The admin caller, set by ``AdminAuthenticator`` on admin routes.
    public var admin: AdminPrincipal?

    /// DESIGN.md §2: bodies over 1 MiB are refused with 413.
    public var maxUploadSize: Int { 1 << 20 }

    /// The client's IP address (the TCP peer; used for abuse limits).
    public let clientIP: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.clientIP = source.channel.remoteAddress?.ipAddress
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
