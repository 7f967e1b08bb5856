/// Where the gateway's own outbound requests (identity providers' JWKS and user-info,
/// webhooks) may go (DESIGN.md §5, "Outbound HTTP").
///
/// The URLs come from tenant configuration — a tenant admin can name any JWKS or
/// user-info endpoint — so without this rule an admin key is a way to make the gateway
/// call its own loopback services, the cloud metadata endpoint (169.254.169.254) or the
/// operator's private network (server-side request forgery). The decision is made on the
/// *resolved* address the connection will use, not on the host name, so a name that
/// resolves to a private address is refused just like the address itself.
///
/// Rules:
/// - `https` to a public address is allowed.
/// - Loopback, link-local, private, CGNAT, unspecified, multicast, broadcast and reserved
///   addresses (and IPv4-mapped IPv6 forms of them, which ``IPAddress`` reads as IPv4)
///   are refused — unless the address lies in one of ``allowedPrivateNetworks``.
/// - Plain `http` is allowed only to addresses inside ``allowedPrivateNetworks`` (a
///   development IdP on loopback, an in-cluster mock); everything else needs `https`.
public struct OutboundPolicy: Sendable, Equatable {
    /// The operator's exceptions (`outbound.allowed_private_networks`): addresses inside
    /// them are reachable whatever their kind, and over plain `http` too.
    public var allowedPrivateNetworks: [IPNetwork]

    /// A policy with the operator's exceptions (none by default).
    public init(allowedPrivateNetworks: [IPNetwork] = []) {
        self.allowedPrivateNetworks = allowedPrivateNetworks
    }

    /// What the policy says about one destination.
    public enum Decision: Sendable, Equatable {
        /// The request may go.
        case allow
        /// The request must not go; the reason names the address and why (never a URL).
        case refuse(reason: String)
    }

    /// Whether a request with URL scheme `scheme` may connect to `address`.
    public func decide(scheme: String, address: IPAddress) -> Decision {
        let scheme = scheme.lowercased()
        guard scheme == "https" || scheme == "http" else {
            return .refuse(reason: "the scheme \(scheme) is not http or https")
        }
        if allowedPrivateNetworks.contains(where: { $0.contains(address) }) { return .allow }
        if let kind = Self.specialPurposeKind(of: address) {
            return .refuse(
                reason: "\(address) is a \(kind) address, outside outbound.allowed_private_networks")
        }
        guard scheme == "https" else {
            return .refuse(reason: "plain http to \(address) is not allowed (https only outside outbound.allowed_private_networks)")
        }
        return .allow
    }

    /// Whether a request may go to a host that resolved to `addresses`: every one of them
    /// must be allowed (a name with one private address among public ones is refused, since
    /// the connection could use any of them); an empty list is refused.
    public func decide(scheme: String, addresses: [IPAddress]) -> Decision {
        guard !addresses.isEmpty else { return .refuse(reason: "the host has no address") }
        for address in addresses {
            if case .refuse(let reason) = decide(scheme: scheme, address: address) { return .refuse(reason: reason) }
        }
        return .allow
    }

    /// The kind of special-purpose address `address` is (`"loopback"`, `"private"`, …), or
    /// `nil` for an ordinary public unicast address.
    public static func specialPurposeKind(of address: IPAddress) -> String? {
        if !address.isIPv6 {
            return specialIPv4.first { $0.network.contains(address) }?.kind
        }
        // IPv4 embedded in IPv6 by translation (NAT64's well-known prefix) reaches the IPv4
        // address: judge that address. (IPv4-mapped `::ffff:a.b.c.d` is already IPv4 here.)
        if nat64?.contains(address) == true, let embedded = IPAddress(ipv4Bytes: address.bytes.suffix(4)) {
            return specialPurposeKind(of: embedded).map { "\($0) (NAT64)" }
        }
        return specialIPv6.first { $0.network.contains(address) }?.kind
    }

    private struct Range: Sendable {
        let network: IPNetwork
        let kind: String
    }

    private static func ranges(_ entries: [(String, String)]) -> [Range] {
        entries.compactMap { text, kind in IPNetwork(text).map { Range(network: $0, kind: kind) } }
    }

    /// IANA's IPv4 special-purpose registry, as far as reaching it from a server is a risk.
    private static let specialIPv4 = ranges([
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (CGNAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignment"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),  // includes the broadcast address 255.255.255.255
    ])

    private static let specialIPv6 = ranges([
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        // Deprecated IPv4-compatible addresses (`::a.b.c.d`): nothing legitimate uses them.
        ("::/96", "IPv4-compatible"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("fc00::/7", "unique local (private)"),
        ("ff00::/8", "multicast"),
        // Translation prefixes that can lead to any IPv4 address, internal ones included,
        // where such routing exists: local-use NAT64 (RFC 8215) and 6to4.
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("2002::/16", "6to4"),
    ])

    private static let nat64 = IPNetwork("64:ff9b::/96")
}

extension IPAddress {
    /// The IPv4 address with these four bytes.
    fileprivate init?(ipv4Bytes: some Collection<UInt8>) {
        let bytes = Array(ipv4Bytes)
        guard bytes.count == 4 else { return nil }
        self.init(bytes.map(String.init).joined(separator: "."))
    }
}
