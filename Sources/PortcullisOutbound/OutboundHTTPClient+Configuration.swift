public import NIOSSL
public import PortcullisCore

extension OutboundHTTPClient {
    /// The limits every outbound request runs under.
    public struct Configuration: Sendable {
        /// Where requests may go (`outbound.allowed_private_networks`).
        public var policy: OutboundPolicy
        /// How long opening the TCP connection (and the TLS handshake) may take.
        public var connectTimeout: Duration
        /// How long the whole exchange may take: resolution, connection, the request, the
        /// response head and the whole body. A provider slower than this fails the
        /// sign-in with a 400 rather than holding the caller.
        public var deadline: Duration
        /// The largest body accepted, in bytes; a larger one is abandoned as it streams in.
        public var maximumBodySize: Int
        /// The `User-Agent` sent unless the caller sets one (GitHub's API requires one).
        public var userAgent: String
        /// TLS settings; `nil`: the system's trust roots. An operator whose identity provider
        /// has a certificate from a private CA sets trust roots here. Whatever it says, the
        /// certificate is checked against the URL's host name, not the pinned address.
        public var tlsConfiguration: TLSConfiguration?

        /// Limits; the defaults suit JWKS and user-info calls (3 s connect, 5 s in all, 1 MiB).
        public init(
            policy: OutboundPolicy = OutboundPolicy(), connectTimeout: Duration = .seconds(3),
            deadline: Duration = .seconds(5), maximumBodySize: Int = 1 << 20, userAgent: String = "Portcullis",
            tlsConfiguration: TLSConfiguration? = nil
        ) {
            self.policy = policy
            self.connectTimeout = connectTimeout
            self.deadline = deadline
            self.maximumBodySize = maximumBodySize
            self.userAgent = userAgent
            self.tlsConfiguration = tlsConfiguration
        }
    }
}
