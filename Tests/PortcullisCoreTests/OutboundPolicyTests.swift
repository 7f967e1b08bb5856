import PortcullisCore
import Testing

@Suite("Outbound policy")
struct OutboundPolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let scheme: String
        let address: String
        let allowed: [String]
        let goes: Bool
        init(_ scheme: String, _ address: String, allowed: [String] = [], goes: Bool) {
            self.scheme = scheme
            self.address = address
            self.allowed = allowed
            self.goes = goes
        }
        var testDescription: String {
            "\(scheme)://\(address) with \(allowed) → \(goes ? "allowed" : "refused")"
        }
    }

    @Test(
        "https to public addresses only; special-purpose addresses and plain http need an allowed network",
        arguments: [
            // Public unicast over https goes; over plain http it does not.
            Case("https", "93.184.215.14", goes: true),
            Case("HTTPS", "8.8.8.8", goes: true),
            Case("https", "2606:4700:4700::1111", goes: true),
            Case("http", "93.184.215.14", goes: false),
            Case("http", "2606:4700:4700::1111", goes: false),
            Case("ftp", "93.184.215.14", goes: false),
            Case("file", "93.184.215.14", allowed: ["0.0.0.0/0"], goes: false),
            // Loopback.
            Case("https", "127.0.0.1", goes: false),
            Case("https", "127.255.255.254", goes: false),
            Case("https", "::1", goes: false),
            Case("https", "::ffff:127.0.0.1", goes: false),
            // Link-local, including the cloud metadata endpoint.
            Case("https", "169.254.169.254", goes: false),
            Case("https", "fe80::1", goes: false),
            Case("https", "febf::1", goes: false),
            Case("https", "::ffff:169.254.169.254", goes: false),
            // Private.
            Case("https", "10.0.0.1", goes: false),
            Case("https", "172.16.0.1", goes: false),
            Case("https", "172.31.255.255", goes: false),
            Case("https", "172.32.0.1", goes: true),
            Case("https", "192.168.1.1", goes: false),
            Case("https", "fc00::1", goes: false),
            Case("https", "fd12:3456::1", goes: false),
            Case("https", "::ffff:10.0.0.1", goes: false),
            // CGNAT.
            Case("https", "100.64.0.1", goes: false),
            Case("https", "100.127.255.255", goes: false),
            Case("https", "100.128.0.1", goes: true),
            // Unspecified, multicast, broadcast, reserved.
            Case("https", "0.0.0.0", goes: false),
            Case("https", "0.1.2.3", goes: false),
            Case("https", "::", goes: false),
            Case("https", "224.0.0.1", goes: false),
            Case("https", "239.255.255.250", goes: false),
            Case("https", "ff02::1", goes: false),
            Case("https", "255.255.255.255", goes: false),
            Case("https", "240.0.0.1", goes: false),
            // IPv4-compatible and NAT64 forms of special addresses.
            Case("https", "::127.0.0.1", goes: false),
            Case("https", "64:ff9b::127.0.0.1", goes: false),
            Case("https", "64:ff9b::a9fe:a9fe", goes: false),
            Case("https", "64:ff9b::8.8.8.8", goes: true),
            // The operator's allowed networks lift the refusal, and allow plain http.
            Case("https", "127.0.0.1", allowed: ["127.0.0.0/8"], goes: true),
            Case("http", "127.0.0.1", allowed: ["127.0.0.0/8"], goes: true),
            Case("http", "::ffff:127.0.0.1", allowed: ["127.0.0.0/8"], goes: true),
            Case("http", "::1", allowed: ["127.0.0.0/8"], goes: false),
            Case("http", "::1", allowed: ["127.0.0.0/8", "::1/128"], goes: true),
            Case("https", "10.1.2.3", allowed: ["10.1.0.0/16"], goes: true),
            Case("https", "10.2.0.1", allowed: ["10.1.0.0/16"], goes: false),
            Case("http", "10.1.2.3", allowed: ["10.1.0.0/16"], goes: true),
            Case("http", "203.0.113.5", allowed: ["203.0.113.0/24"], goes: true),
            Case("https", "169.254.169.254", allowed: ["10.0.0.0/8"], goes: false),
        ])
    func decide(_ test: Case) throws {
        let address = try #require(IPAddress(test.address))
        let policy = OutboundPolicy(allowedPrivateNetworks: test.allowed.compactMap(IPNetwork.init))
        let decision = policy.decide(scheme: test.scheme, address: address)
        #expect((decision == .allow) == test.goes, "\(decision)")
    }

    @Test("a host is refused when any one of its addresses is refused, and when it has none")
    func everyAddressCounts() throws {
        let policy = OutboundPolicy()
        let public1 = try #require(IPAddress("93.184.215.14"))
        let public2 = try #require(IPAddress("2606:4700:4700::1111"))
        let loopback = try #require(IPAddress("127.0.0.1"))
        #expect(policy.decide(scheme: "https", addresses: [public1, public2]) == .allow)
        #expect(policy.decide(scheme: "https", addresses: [public1, loopback]) != .allow)
        #expect(policy.decide(scheme: "https", addresses: [loopback, public1]) != .allow)
        #expect(policy.decide(scheme: "https", addresses: []) != .allow)
    }

    @Test("a refusal says which address and why, and points at the setting")
    func reasons() throws {
        let policy = OutboundPolicy()
        let metadata = try #require(IPAddress("169.254.169.254"))
        guard case .refuse(let reason) = policy.decide(scheme: "https", address: metadata) else {
            Issue.record("metadata endpoint allowed")
            return
        }
        #expect(reason.contains("169.254.169.254") && reason.contains("link-local"))
        #expect(reason.contains("outbound.allowed_private_networks"))
        let public1 = try #require(IPAddress("93.184.215.14"))
        guard case .refuse(let plain) = policy.decide(scheme: "http", address: public1) else {
            Issue.record("plain http allowed")
            return
        }
        #expect(plain.contains("http") && plain.contains("93.184.215.14"))
    }
}
