import PortcullisCore
import Testing

@Suite("Client address")
struct ClientAddressTests {
    static let proxies = ["10.0.0.0/8", "2001:db8:ffff::/48"].compactMap(IPNetwork.init)

    struct Case: Sendable, CustomTestStringConvertible {
        let peer: String
        let forwardedFor: [String]
        let expected: String
        var testDescription: String { "\(peer) + \(forwardedFor) → \(expected)" }
    }

    @Test(
        "the client is the TCP peer unless a trusted proxy forwards for it; the right-most untrusted hop wins",
        arguments: [
            // An untrusted peer's header is ignored, whatever it claims.
            Case(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"], expected: "203.0.113.9"),
            Case(peer: "10.1.2.3", forwardedFor: [], expected: "10.1.2.3"),
            Case(peer: "10.1.2.3", forwardedFor: ["198.51.100.1"], expected: "198.51.100.1"),
            // A client writing its own X-Forwarded-For cannot pick the address counted: the proxy appends the real one.
            Case(peer: "10.1.2.3", forwardedFor: ["1.2.3.4, 198.51.100.1"], expected: "198.51.100.1"),
            Case(peer: "10.1.2.3", forwardedFor: ["1.2.3.4", "198.51.100.1, 10.9.9.9"], expected: "198.51.100.1"),
            Case(peer: "10.1.2.3", forwardedFor: ["10.4.4.4, 10.5.5.5"], expected: "10.4.4.4"),
            Case(peer: "10.1.2.3", forwardedFor: ["garbage, 198.51.100.1"], expected: "198.51.100.1"),
            Case(peer: "10.1.2.3", forwardedFor: ["198.51.100.1, garbage"], expected: "10.1.2.3"),
            Case(peer: "2001:db8:ffff::1", forwardedFor: ["2001:db8:1:2::5"], expected: "2001:db8:1:2::5"),
            Case(peer: "::ffff:10.1.2.3", forwardedFor: ["198.51.100.7"], expected: "198.51.100.7"),
        ])
    func resolve(_ test: Case) {
        let client = ClientAddress.resolve(
            peer: IPAddress(test.peer), forwardedFor: test.forwardedFor, trustedProxies: Self.proxies)
        #expect(client == IPAddress(test.expected))
    }

    @Test("IPv6 clients are counted by /64, IPv4 clients by address")
    func limitKeys() throws {
        let a = try #require(IPAddress("2001:db8:1:2::5"))
        let b = try #require(IPAddress("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        let c = try #require(IPAddress("2001:db8:1:3::5"))
        #expect(ClientAddress.limitKey(a) == ClientAddress.limitKey(b))
        #expect(ClientAddress.limitKey(a) != ClientAddress.limitKey(c))
        #expect(ClientAddress.limitKey(a) == "2001:db8:1:2::/64")
        #expect(ClientAddress.limitKey(try #require(IPAddress("192.0.2.1"))) == "192.0.2.1")
    }

    @Test("CIDR parsing and membership")
    func networks() throws {
        let network = try #require(IPNetwork("192.168.0.0/16"))
        #expect(network.contains(try #require(IPAddress("192.168.255.1"))))
        #expect(!network.contains(try #require(IPAddress("192.169.0.1"))))
        #expect(!network.contains(try #require(IPAddress("::1"))))
        #expect(try #require(IPNetwork("127.0.0.1")).contains(try #require(IPAddress("127.0.0.1"))))
        #expect(try #require(IPNetwork("0.0.0.0/0")).contains(try #require(IPAddress("8.8.8.8"))))
        #expect(try #require(IPNetwork("fe80::/10")).contains(try #require(IPAddress("fe80::1"))))
        for bad in ["", "10.0.0.0/33", "10.0.0.0/-1", "300.1.1.1", "::/129", "10.0.0.0/8/8", "example.com", "fe80::1%eth0"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
    }
}
