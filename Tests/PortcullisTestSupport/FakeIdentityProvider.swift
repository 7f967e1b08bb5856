import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
public import NIOSSL
import PortcullisCore
import PortcullisCrypto
public import PortcullisJSON
import ServiceLifecycle
import SwiftASN1
import Synchronization
import X509

/// A real OIDC identity provider on loopback for tests: an HTTP server (Hummingbird on
/// 127.0.0.1, a free port) with its own RSA-2048 keys, minting RS256 ID tokens and
/// answering the requests the gateway makes to a provider.
///
/// ```swift
/// try await FakeIdentityProvider.run { idp in
///     let token = idp.idToken(sub: "u1", email: "a@example.com")
///     // verify against idp.jwksURL, issuer idp.issuer, audience idp.audience
/// }
/// ```
///
/// Endpoints: `/.well-known/openid-configuration`; `/jwks` (the published keys, with
/// `Cache-Control: max-age=` ``jwksMaxAge`` when set, counted by ``jwksFetches``);
/// `/userinfo` (`Authorization: Bearer <token>` → the profile set by
/// ``setUserInfo(_:forAccessToken:)``, else 401); `/hang` (never answers); `/drip` (a byte
/// every 200 ms, forever); `/redirect` (302 to another host); `/large` (2 MiB with a
/// Content-Length) and `/large-stream` (2 MiB streamed without one); `/status/{code}`;
/// `POST /revoke` (RFC 7009: records each form body in ``revocations``, answers 200).
public final class FakeIdentityProvider: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    /// The issuer its tokens carry (the base URL).
    public var issuer: String { baseURL }
    /// Its JWKS.
    public var jwksURL: String { baseURL + "/jwks" }
    /// Its user-info endpoint.
    public var userInfoURL: String { baseURL + "/userinfo" }
    /// The audience its tokens carry by default (the app's client id).
    public let audience = "fake-client-id"
    /// For a provider started with a `tlsHost`: client TLS settings trusting the test CA
    /// that issued its certificate (for that host name only).
    public let clientTLSConfiguration: TLSConfiguration?

    let state: SharedState

    /// The provider's mutable state, shared by the object tests hold and the router.
    final class SharedState: Sendable {
        struct Values: Sendable {
            var keys: [String: _RSA.Signing.PrivateKey]
            var published: [String]
            var signingKid: String
            var rotations = 0
            var jwksFetches = 0
            var jwksMaxAge: Int?
            var jwksDelay: Duration = .zero
            var jwksFailing = false
            var profiles: [String: JSONValue] = [:]
            var revocations: [[String: String]] = []
        }

        let values: Mutex<Values>

        init(_ values: Values) {
            self.values = Mutex(values)
        }
    }

    /// RSA key generation is slow in debug builds: every fake provider draws from these
    /// (index 0 signs first, rotations take the next ones, the last is never published).
    static let keyPool: [_RSA.Signing.PrivateKey] = (0..<4).compactMap { _ in
        try? _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    private init(baseURL: String, state: SharedState, clientTLSConfiguration: TLSConfiguration?) {
        self.baseURL = baseURL
        self.state = state
        self.clientTLSConfiguration = clientTLSConfiguration
    }

    /// Starts a provider, runs `body` with it, and stops it.
    ///
    /// With `tlsHost`, it serves https with a certificate for that name from a throwaway CA
    /// (``clientTLSConfiguration`` trusts it), and ``baseURL`` is `https://<tlsHost>:PORT`:
    /// the test makes the name resolve to 127.0.0.1 (a stub resolver).
    public static func run<T: Sendable>(
        tlsHost: String? = nil, _ body: (FakeIdentityProvider) async throws -> T
    )
        async throws -> T
    {
        guard keyPool.count == 4 else { throw TestSetupError("could not generate RSA keys") }
        let tls = try tlsHost.map(TestCertificates.init(host:))
        let state = SharedState(.init(keys: ["key-1": keyPool[0]], published: ["key-1"], signingKid: "key-1"))
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "fake-idp")
        logger.logLevel = .critical
        let app = Application(
            router: makeRouter(state),
            server: try tls.map { try .tls(.http1(), tlsConfiguration: $0.server) } ?? .http1(),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { portContinuation.finish() }
                try await services.run()
            }
            // Stopped gracefully first, so the listening socket closes before anything is
            // cancelled: cancelling the server outright could land while a late connection
            // (a client still retrying, say) is being accepted, and NIO traps on an async
            // channel that is dropped unfinished. What still runs after a moment (a `/hang`
            // handler) is then cancelled.
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                throw TestSetupError("the fake identity provider did not start")
            }
            let baseURL = tlsHost.map { "https://\($0):\(port)" } ?? "http://127.0.0.1:\(port)"
            let result: Result<T, any Error>
            do {
                result = .success(
                    try await body(FakeIdentityProvider(baseURL: baseURL, state: state, clientTLSConfiguration: tls?.client)))
            } catch {
                result = .failure(error)
            }
            await services.triggerGracefulShutdown()
            try? await Task.sleep(for: .milliseconds(500))
            return try result.get()
        }
    }

    // MARK: Controls

    /// Where tokens are revoked (`POST`).
    public var revocationURL: String { baseURL + "/revoke" }

    /// The form bodies posted to `/revoke`, in order.
    public var revocations: [[String: String]] { state.values.withLock { $0.revocations } }

    /// How many times `/jwks` has been fetched.
    public var jwksFetches: Int { state.values.withLock { $0.jwksFetches } }

    /// The `max-age` `/jwks` answers with (`nil`: no Cache-Control header).
    public var jwksMaxAge: Int? {
        get { state.values.withLock { $0.jwksMaxAge } }
        set { state.values.withLock { $0.jwksMaxAge = newValue } }
    }

    /// How long `/jwks` waits before answering (to hold concurrent fetches in flight).
    public var jwksDelay: Duration {
        get { state.values.withLock { $0.jwksDelay } }
        set { state.values.withLock { $0.jwksDelay = newValue } }
    }

    /// Whether `/jwks` answers 503 (still counted in ``jwksFetches``).
    public var jwksFailing: Bool {
        get { state.values.withLock { $0.jwksFailing } }
        set { state.values.withLock { $0.jwksFailing = newValue } }
    }

    /// The `kid` new tokens are signed with.
    public var currentKid: String { state.values.withLock { $0.signingKid } }

    /// Rotates: publishes a new key and signs with it from now on; the old key stays
    /// published unless `retireOld`. Returns the new `kid`.
    @discardableResult
    public func rotateKey(retireOld: Bool = false) -> String {
        state.values.withLock { values in
            values.rotations += 1
            let kid = "key-\(values.rotations + 1)"
            values.keys[kid] = Self.keyPool[min(values.rotations, Self.keyPool.count - 2)]
            if retireOld { values.published.removeAll { $0 == values.signingKid } }
            values.published.append(kid)
            values.signingKid = kid
            return kid
        }
    }

    /// Makes `/userinfo` answer `profile` to `Authorization: Bearer <accessToken>`.
    public func setUserInfo(_ profile: JSONValue, forAccessToken accessToken: String) {
        state.values.withLock { $0.profiles[accessToken] = profile }
    }

    /// The public half of the current signing key as PEM (for HS256 key-confusion forgeries).
    public var publicKeyPEM: String {
        state.values.withLock { values in values.keys[values.signingKid]?.publicKey.pemRepresentation ?? "" }
    }
}
