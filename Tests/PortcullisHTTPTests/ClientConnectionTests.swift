import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a client's connection can and cannot do: who it counts as, how long it may hold on.
@Suite("Client connections")
struct ClientConnectionTests {
    /// A failed sign-in as the client `forwardedFor` says it is.
    static func failedSignIn(_ gateway: TestGateway, tenant: String, as forwardedFor: String) async throws -> String? {
        try await gateway.client.execute(
            uri: "/v1/accounts:signInWithPassword?key=\(TestGateway.apiKey)", method: .post,
            headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: forwardedFor],
            body: ByteBuffer(string: #"{"email":"nobody@example.com","password":"guess123","tenantId":"\#(tenant)"}"#)
        ).errorMessage
    }

    /// A tenant whose password hashes are the cheapest the settings allow: each failed
    /// sign-in still verifies a dummy hash, and at the default cost a saturated parallel test
    /// run could hold those past the live client's read timeout.
    static func createCheapHashTenant(_ gateway: TestGateway, named name: String) async throws -> String {
        try await gateway.createTenant(
            #"{"displayName":"\#(name)","allowPasswordSignup":true,"scryptParameters":{"logN":10,"r":1,"p":1}}"#)
    }

    static func limitedPerIP(_ configuration: inout ServerConfiguration) {
        configuration.abuseGuard = AbuseGuard(
            limits: AbuseLimits(failedSignInsPerAccount: 1000, failedSignInsPerIP: 3, signUpsPerIP: 1000, windowSeconds: 900))
    }

    @Test("behind a trusted proxy, per-IP limits count the forwarded client; IPv6 clients by /64")
    func trustedProxyForwardsClient() async throws {
        try await TestGateway.run(
            live: true,
            configure: {
                Self.limitedPerIP(&$0)
                $0.trustedProxies = [IPNetwork("127.0.0.0/8")!]
            }
        ) { gateway in
            let tenant = try await Self.createCheapHashTenant(gateway, named: "xff")
            for _ in 0..<3 {
                #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "198.51.100.7") == "EMAIL_NOT_FOUND")
            }
            #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "198.51.100.7") == "TOO_MANY_ATTEMPTS_TRY_LATER")
            // Another client behind the same proxy is not locked out by the first.
            #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "198.51.100.8") == "EMAIL_NOT_FOUND")
            // A client cannot choose its address by writing the header itself: the proxy's hop wins.
            #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "203.0.113.1, 198.51.100.7") == "TOO_MANY_ATTEMPTS_TRY_LATER")

            for suffix in ["1", "2", "3"] {
                #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "2001:db8:1:2::\(suffix)") == "EMAIL_NOT_FOUND")
            }
            #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "2001:db8:1:2:ffff::9") == "TOO_MANY_ATTEMPTS_TRY_LATER")
            #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "2001:db8:1:3::1") == "EMAIL_NOT_FOUND")
        }
    }

    @Test("without trusted proxies X-Forwarded-For is ignored: every request counts against the TCP peer")
    func untrustedHeaderIgnored() async throws {
        try await TestGateway.run(live: true, configure: Self.limitedPerIP) { gateway in
            let tenant = try await Self.createCheapHashTenant(gateway, named: "noxff")
            for index in 0..<3 {
                #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "198.51.100.\(index)") == "EMAIL_NOT_FOUND")
            }
            #expect(try await Self.failedSignIn(gateway, tenant: tenant, as: "198.51.100.99") == "TOO_MANY_ATTEMPTS_TRY_LATER")
        }
    }

    @Test("a client that sends a request head too slowly, or trickles its body, is disconnected")
    func slowClientsAreDisconnected() async throws {
        try await TestGateway.run(
            live: true,
            configure: {
                $0.idleTimeout = .seconds(1)
                $0.requestTimeout = .seconds(2)
            }
        ) { gateway in
            guard let port = gateway.client.port else { throw TestSetupError("no port") }
            // Half a request head, then nothing: the idle timeout closes it. The wait is
            // generous because a saturated parallel test run (a browser, Node.js and Python
            // beside it on two cores) can hold the event loop for seconds; a connection the
            // timeout missed would stay open all of it.
            let silent = try RawConnection(port: port)
            try silent.send("POST /v1/accounts:signUp?key=\(TestGateway.apiKey) HTTP/1.1\r\nHost: x\r\n")
            #expect(await silent.waitForClose(within: .seconds(30)))

            // A complete head, then one body byte every 300 ms: each byte resets the idle timer,
            // but the whole request must arrive within the request timeout. The client gives up
            // only after a minute, not after a count of bytes: a saturated run can hold the
            // server's event loop (and its timer) for many of the client's 300 ms waits.
            let trickle = try RawConnection(port: port)
            try trickle.send(
                "POST /v1/accounts:signUp?key=\(TestGateway.apiKey) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            )
            var sent = 0
            var closed = false
            let giveUp = ContinuousClock.now + .seconds(60)
            while !closed, ContinuousClock.now < giveUp {
                guard (try? trickle.send(" ")) != nil else {
                    closed = true
                    break
                }
                closed = await trickle.waitForClose(within: .milliseconds(300))
                if !closed { sent += 1 }
            }
            #expect(closed, "the connection outlived \(sent) body bytes over a minute")
            #expect(sent >= 2, "closed after \(sent) bytes: the idle timeout, not the request timeout, fired")

            // A well-behaved client is unaffected.
            let prompt = try RawConnection(port: port)
            try prompt.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await prompt.readUntilClosed(within: .seconds(30)).hasPrefix("HTTP/1.1 200"))
        }
    }
}

extension ClientConnectionTests {
    @Test("Expect: 100-continue is answered at once: 100 Continue for a body within the limit, 413 from the head for one over it")
    func expectContinue() async throws {
        try await TestGateway.run(live: true) { gateway in
            guard let port = gateway.client.port else { throw TestSetupError("no port") }
            func head(length: Int) -> String {
                "POST /v1/accounts:signUp?key=\(TestGateway.apiKey) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(length)\r\nExpect: 100-continue\r\n\r\n"
            }
            // No body is sent before each answer, so any answer at all comes from the head alone;
            // the waits are generous because a saturated parallel test run is slow, not because
            // the answers may be.
            let small = try RawConnection(port: port)
            try small.send(head(length: 2))
            #expect(await small.readHead(within: .seconds(5)).hasPrefix("HTTP/1.1 100"))
            try small.send("{}")
            #expect(await small.readHead(within: .seconds(5)).hasPrefix("HTTP/1.1 400"))

            let large = try RawConnection(port: port)
            try large.send(head(length: 2_000_000))
            let refusal = await large.readHead(within: .seconds(5))
            #expect(refusal.hasPrefix("HTTP/1.1 413"), "\(refusal)")
        }
    }
}

/// A blocking TCP connection to the gateway, byte by byte, as a slow client would use it.
///
/// Its waits run on a Dispatch thread: blocking Swift's cooperative pool (two threads on
/// two cores) would starve the very server under test, which runs on it.
final class RawConnection: @unchecked Sendable {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, connected == 0 else { throw TestSetupError("cannot connect to 127.0.0.1:\(port)") }
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            throw TestSetupError("send failed")
        }
    }

    /// Whether the server closes the connection within `timeout` (reading and discarding whatever it sends).
    func waitForClose(within timeout: Duration) async -> Bool {
        await offPool {
            var ignored: [UInt8] = []
            return self.read(into: &ignored, within: timeout)
        }
    }

    /// The first response head the server sends (or what arrived within `timeout`).
    func readHead(within timeout: Duration) async -> String {
        await offPool {
            var received: [UInt8] = []
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline, !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                let remaining = deadline - ContinuousClock.now
                if self.read(into: &received, within: min(remaining, .milliseconds(50)), once: true) { break }
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// What the server sends until it closes the connection (or `timeout` passes).
    func readUntilClosed(within timeout: Duration) async -> String {
        await offPool {
            var received: [UInt8] = []
            _ = self.read(into: &received, within: timeout)
            return String(decoding: received, as: UTF8.self)
        }
    }

    private func offPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }

    /// Reads until the connection closes (`true`) or `timeout` passes; with `once`, returns
    /// after the first bytes arrive.
    private func read(into received: inout [UInt8], within timeout: Duration, once: Bool = false) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - ContinuousClock.now
            let milliseconds = Int32(max(1, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&descriptorSet, 1, milliseconds) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return true }
            received += buffer.prefix(count)
            if once { return false }
        }
        return false
    }
}
