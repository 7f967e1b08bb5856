import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as bytes (4 or 16).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Parses dotted IPv4 or RFC 4291 IPv6 text (an IPv4-mapped IPv6 address reads as its
    /// IPv4 address); `nil` for anything else, including zone ids and ports.
    public init?(_ text: some StringProtocol) {
        let text = String(text)
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let raw = withUnsafeBytes(of: &v6) { Array($0) }
            let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
            bytes = Array(raw.prefix(12)) == mappedPrefix ? Array(raw.suffix(4)) : raw
        } else {
            return nil
        }
    }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { bytes.count == 16 }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv6 ? AF_INET6 : AF_INET
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A CIDR network such as `10.0.0.0/8` or `2001:db8::/32`.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's address (host bits as written).
    public let address: IPAddress
    /// The prefix length.
    public let prefixLength: Int

    /// Parses `address/prefix`, or a bare address (a single host).
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(parts[0]) else { return nil }
        let maximum = address.bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length) else { return nil }
            // `::ffff:10.0.0.0/104` names an IPv4 network: shift the prefix with the address.
            let mapped = parts[0].contains(":") && !address.isIPv6
            guard !mapped || length >= 96 else { return nil }
            prefixLength = mapped ? length - 96 : length
        } else {
            prefixLength = maximum
        }
        self.address = address
    }

    /// Whether `candidate` lies in this network (an IPv4 address is never in an IPv6 network).
    public func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.bytes.count == address.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(address.bytes, candidate.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

/// Who a request comes from, for the abuse limits (DESIGN.md §5).
public enum ClientAddress {
    /// The client behind `peer`: the TCP peer itself, unless it is one of the operator's
    /// `trustedProxies`; then `X-Forwarded-For` is read from the right, skipping trusted
    /// proxies, and the first address that is not one is the client.
    ///
    /// Right to left, because every proxy appends the address it received the request
    /// from: the entries left of the last trusted hop are whatever the client sent, and
    /// a client can write anything there. A malformed entry ends the walk at the last
    /// trusted hop, which is then the client as far as the limits are concerned.
    public static func resolve(peer: IPAddress?, forwardedFor: [String], trustedProxies: [IPNetwork]) -> IPAddress? {
        guard var client = peer else { return nil }
        func isTrusted(_ address: IPAddress) -> Bool { trustedProxies.contains { $0.contains(address) } }
        guard isTrusted(client) else { return client }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { return client }
            client = address
            if !isTrusted(address) { return address }
        }
        return client
    }

    /// The key the per-IP limits count under: the address itself for IPv4, its /64 for
    /// IPv6, since one subscriber usually holds a whole /64 and can rotate through it.
    public static func limitKey(_ address: IPAddress) -> String {
        guard address.isIPv6 else { return address.description }
        return "\(IPAddress(bytes: Array(address.bytes.prefix(8)) + Array(repeating: 0, count: 8)))/64"
    }
}

extension IPAddress {
    fileprivate init(bytes: [UInt8]) {
        self.bytes = bytes
    }
}
