import Foundation
import PortcullisCore

/// The parts of an outbound URL that the policy and the connection need.
struct OutboundTarget: Sendable {
    /// `http` or `https` (lower case).
    let scheme: String
    /// The host as async-http-client reads it (`URL.host`, IPv6 brackets removed): the
    /// key of its `dnsOverride`.
    let host: String
    /// The address, when the host is an IP literal (checked directly, never resolved).
    let literal: IPAddress?

    /// Parses `url`; throws ``OutboundFailure/Kind/invalidURL`` unless it is an absolute
    /// http(s) URL with a host.
    init(_ url: String) throws(OutboundFailure) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
            scheme == "http" || scheme == "https", var host = parsed.host, !host.isEmpty
        else { throw OutboundFailure(host: "", kind: .invalidURL) }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.scheme = scheme
        self.host = host
        self.literal = IPAddress(host)
    }
}
