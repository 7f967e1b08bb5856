import NIOSSL
import PortcullisCore
import PortcullisJSON
import PortcullisOutbound
import PortcullisTestSupport
import Synchronization
import Testing

/// The outbound client against a real server on loopback (the fake identity provider):
/// the network policy on resolved addresses, pinning, redirects, the size cap and the deadline.
@Suite("Outbound HTTP client")
struct OutboundHTTPClientTests {
    static let loopback = [IPNetwork("127.0.0.0/8"), IPNetwork("::1/128")].compactMap { $0 }

    /// A client that may reach loopback. The deadline is generous (a parallel debug test run
    /// on two cores can take seconds over a TLS handshake or a 2 MiB body); the tests of the
    /// deadline itself set a short one.
    static func client(
        allowed: [IPNetwork] = loopback, deadline: Duration = .seconds(30), maximumBodySize: Int = 1 << 20,
        resolver: any HostResolver = SystemHostResolver(), tls: TLSConfiguration? = nil
    ) -> OutboundHTTPClient {
        OutboundHTTPClient(
            configuration: .init(
                policy: OutboundPolicy(allowedPrivateNetworks: allowed), connectTimeout: min(deadline, .seconds(10)), deadline: deadline,
                maximumBodySize: maximumBodySize, tlsConfiguration: tls),
            resolver: resolver)
    }

    /// Resolves chosen names to chosen addresses, counting lookups.
    final class StubResolver: HostResolver {
        let table: [String: [String]]
        let lookups = Mutex(0)
        init(_ table: [String: [String]]) { self.table = table }
        func addresses(of host: String) async throws(OutboundFailure) -> [IPAddress] {
            lookups.withLock { $0 += 1 }
            guard let entries = table[host] else {
                throw OutboundFailure(host: host, kind: .unreachable(reason: "cannot resolve"))
            }
            return entries.compactMap { IPAddress($0) }
        }
    }

    /// The failure `operation` throws (recording an issue when it succeeds).
    static func failure(_ operation: () async throws(OutboundFailure) -> OutboundResponse) async -> OutboundFailure? {
        do {
            let response = try await operation()
            Issue.record("expected a failure, got status \(response.status)")
            return nil
        } catch {
            return error
        }
    }

    @Test("a GET to an allowed network returns status, headers and body")
    func fetches() async throws {
        try await FakeIdentityProvider.run { idp in
            idp.jwksMaxAge = 300
            let response = try await Self.client().get(idp.jwksURL)
            #expect(response.status == 200)
            #expect(response.maxAgeSeconds == 300)
            #expect(response.header("content-type") == "application/json")
            guard case .object(let document) = try JSONValue.parse(response.body), case .array(let keys)? = document["keys"]
            else {
                Issue.record("not a JWKS")
                return
            }
            #expect(keys.count == 1)
            #expect(idp.jwksFetches == 1)
        }
    }

    @Test("loopback is refused unless 127.0.0.0/8 is an allowed network; nothing is sent")
    func loopbackNeedsPermission() async throws {
        try await FakeIdentityProvider.run { idp in
            let failure = await Self.failure { () async throws(OutboundFailure) in try await Self.client(allowed: []).get(idp.jwksURL) }
            guard case .refusedByPolicy(let reason)? = failure?.kind else {
                Issue.record("not refused by policy: \(String(describing: failure))")
                return
            }
            #expect(reason.contains("127.0.0.1") && reason.contains("loopback"))
            // A tenant admin reads the description: it says no more than that the destination is refused.
            #expect(failure?.description == "127.0.0.1 is not an allowed destination")
            #expect(failure?.logDescription.contains("loopback") == true)
            #expect(idp.jwksFetches == 0)
            // Another private network does not help.
            let other = await Self.failure { () async throws(OutboundFailure) in
                try await Self.client(allowed: [IPNetwork("10.0.0.0/8")].compactMap { $0 }).get(idp.jwksURL)
            }
            #expect(other.map { if case .refusedByPolicy = $0.kind { true } else { false } } == true)
            #expect(idp.jwksFetches == 0)
        }
    }

    @Test("plain http and https to public or private literals are judged before any connection")
    func literals() async {
        let client = Self.client(allowed: [])
        for url in ["http://93.184.215.14/jwks", "https://169.254.169.254/latest/meta-data", "https://[::1]/", "https://10.0.0.1/"] {
            let failure = await Self.failure { () async throws(OutboundFailure) in try await client.get(url) }
            guard case .refusedByPolicy? = failure?.kind else {
                Issue.record("\(url): \(String(describing: failure))")
                continue
            }
        }
    }

    @Test("a name is refused when any one of its addresses is refused")
    func everyResolvedAddressCounts() async throws {
        try await FakeIdentityProvider.run { idp in
            let port = idp.baseURL.split(separator: ":").last.map(String.init) ?? "0"
            let resolver = StubResolver(["mixed.test": ["127.0.0.1", "10.1.2.3"], "meta.test": ["169.254.169.254"]])
            let client = Self.client(resolver: resolver)
            for host in ["mixed.test", "meta.test"] {
                let failure = await Self.failure { () async throws(OutboundFailure) in
                    try await client.get("http://\(host):\(port)/jwks")
                }
                #expect(failure?.host == host)
                guard case .refusedByPolicy? = failure?.kind else {
                    Issue.record("\(host): \(String(describing: failure))")
                    continue
                }
            }
            #expect(idp.jwksFetches == 0)
        }
    }

    @Test("the connection goes to the address that was checked: a name is resolved once, by the client")
    func pinsTheCheckedAddress() async throws {
        try await FakeIdentityProvider.run { idp in
            let port = idp.baseURL.split(separator: ":").last.map(String.init) ?? "0"
            // `pinned.test` exists only in this resolver: had async-http-client resolved the
            // name again (where a rebinding DNS server could answer differently), it would fail.
            let resolver = StubResolver(["pinned.test": ["127.0.0.1"]])
            let response = try await Self.client(resolver: resolver).get("http://pinned.test:\(port)/jwks")
            #expect(response.status == 200)
            #expect(resolver.lookups.withLock { $0 } == 1)
            #expect(idp.jwksFetches == 1)
        }
    }

    @Test("https to a pinned address still verifies the certificate for the URL's host name")
    func tlsKeepsTheHostName() async throws {
        try await FakeIdentityProvider.run(tlsHost: "idp.test") { idp in
            let port = idp.baseURL.split(separator: ":").last.map(String.init) ?? "0"
            let resolver = StubResolver(["idp.test": ["127.0.0.1"], "impostor.test": ["127.0.0.1"]])
            let trusting = Self.client(resolver: resolver, tls: idp.clientTLSConfiguration)
            // Connected to 127.0.0.1, but SNI and the certificate check use idp.test.
            let response = try await trusting.get("https://idp.test:\(port)/jwks")
            #expect(response.status == 200)
            #expect(idp.jwksFetches == 1)
            // The same server under another name: its certificate does not name it.
            let impostor = await Self.failure { () async throws(OutboundFailure) in
                try await trusting.get("https://impostor.test:\(port)/jwks")
            }
            guard case .unreachable(let reason)? = impostor?.kind else {
                Issue.record("impostor.test: \(String(describing: impostor))")
                return
            }
            #expect(reason.contains("TLS"), "\(reason)")
            // Without the test CA among the trust roots, the certificate is refused.
            let untrusting = await Self.failure { () async throws(OutboundFailure) in
                try await Self.client(resolver: resolver).get("https://idp.test:\(port)/jwks")
            }
            guard case .unreachable(let untrusted)? = untrusting?.kind else {
                Issue.record("system roots: \(String(describing: untrusting))")
                return
            }
            #expect(untrusted.contains("TLS"), "\(untrusted)")
            #expect(idp.jwksFetches == 1)
        }
    }

    @Test("redirects are not followed")
    func redirects() async throws {
        try await FakeIdentityProvider.run { idp in
            let failure = await Self.failure { () async throws(OutboundFailure) in try await Self.client().get(idp.baseURL + "/redirect") }
            #expect(failure?.kind == .redirected(status: 302))
        }
    }

    @Test("a body over the cap is refused, whether declared by Content-Length or streamed", arguments: ["/large", "/large-stream"])
    func sizeCap(path: String) async throws {
        try await FakeIdentityProvider.run { idp in
            let failure = await Self.failure { () async throws(OutboundFailure) in try await Self.client().get(idp.baseURL + path) }
            #expect(failure?.kind == .tooLarge(limit: 1 << 20))
            let small = await Self.failure { () async throws(OutboundFailure) in
                try await Self.client(maximumBodySize: 64).get(idp.jwksURL)
            }
            #expect(small?.kind == .tooLarge(limit: 64))
        }
    }

    @Test("a server that never answers, or drips its body, fails at the deadline", arguments: ["/hang", "/drip"])
    func deadline(path: String) async throws {
        try await FakeIdentityProvider.run { idp in
            let clock = ContinuousClock()
            let start = clock.now
            let failure = await Self.failure { () async throws(OutboundFailure) in
                try await Self.client(deadline: .seconds(1)).get(idp.baseURL + path)
            }
            let elapsed = clock.now - start
            #expect(failure?.kind == .timedOut)
            // Bounded (never "waits forever"), with room for a loaded test machine.
            #expect(elapsed < .seconds(11), "took \(elapsed)")
        }
    }

    @Test("non-2xx answers are failures naming the status and host, never the query")
    func badStatus() async throws {
        try await FakeIdentityProvider.run { idp in
            let failure = await Self.failure { () async throws(OutboundFailure) in
                try await Self.client().get(idp.baseURL + "/status/503?access_token=s3cr3t-token")
            }
            #expect(failure?.kind == .badStatus(503))
            #expect(failure?.description == "127.0.0.1 answered with status 503")
            #expect(failure?.description.contains("s3cr3t") == false)
        }
    }

    @Test("nothing listening is unreachable, quickly")
    func refusedConnection() async {
        let failure = await Self.failure { () async throws(OutboundFailure) in try await Self.client().get("http://127.0.0.1:1/jwks") }
        switch failure?.kind {
        case .unreachable?, .timedOut?: break
        default: Issue.record("\(String(describing: failure))")
        }
    }

    @Test(
        "URLs that are not absolute http(s) URLs are refused",
        arguments: ["ftp://example.com/x", "not a url", "/jwks", "file:///etc/passwd", ""])
    func invalidURLs(url: String) async {
        let failure = await Self.failure { () async throws(OutboundFailure) in try await Self.client().get(url) }
        #expect(failure?.kind == .invalidURL)
    }

    @Test("Cache-Control: max-age is read; no-store and no-cache mean 0")
    func maxAge() {
        func response(_ value: String?) -> OutboundResponse {
            OutboundResponse(status: 200, headers: value.map { [("Cache-Control", $0)] } ?? [], body: [])
        }
        #expect(response("public, max-age=3600, must-revalidate").maxAgeSeconds == 3600)
        #expect(response("max-age=\"60\"").maxAgeSeconds == 60)
        #expect(response("no-store").maxAgeSeconds == 0)
        #expect(response("private, no-cache, max-age=100").maxAgeSeconds == 0)
        #expect(response("public").maxAgeSeconds == nil)
        #expect(response(nil).maxAgeSeconds == nil)
        #expect(response("max-age=abc").maxAgeSeconds == nil)
        #expect(response("max-age=99999999999999999999999").maxAgeSeconds == Int.max)
    }
}
