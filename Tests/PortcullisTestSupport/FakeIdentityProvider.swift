import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
public import NIOSSL
public import PortcullisCore
import PortcullisCrypto
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
/// Content-Length) and `/large-stream` (2 MiB streamed without one); `/status/{code}`.
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

    private let state: SharedState

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
        }

        let values: Mutex<Values>

        init(_ values: Values) {
            self.values = Mutex(values)
        }
    }

    /// RSA key generation is slow in debug builds: every fake provider draws from these
    /// (index 0 signs first, rotations take the next ones, the last is never published).
    private static let keyPool: [_RSA.Signing.PrivateKey] = (0..<4).compactMap { _ in
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

    // MARK: Tokens

    /// An RS256 ID token signed with the current key (its `kid` unless `kid` overrides it).
    ///
    /// Defaults: issuer ``issuer``, audience ``audience``, issued now, expiring in an hour.
    /// `nil` claims are left out; `extraClaims` are added last (and may replace any).
    public func idToken(
        sub: String = "federated-user-1", email: String? = "user@example.com", emailVerified: JSONValue? = .bool(true),
        name: String? = "Fed User", picture: String? = nil, audience: JSONValue? = nil, issuer: String? = nil,
        expiresIn: Int64 = 3600, issuedAt: Timestamp? = nil, nonce: String? = nil, kid: String? = nil,
        extraClaims: [String: JSONValue] = [:]
    ) -> String {
        let issued = (issuedAt ?? SystemClock().now()).seconds
        var claims: [String: JSONValue] = [
            "iss": .string(issuer ?? self.issuer), "aud": audience ?? .string(self.audience), "sub": .string(sub),
            "iat": .integer(issued), "exp": .integer(issued + expiresIn),
        ]
        if let email { claims["email"] = .string(email) }
        if let emailVerified { claims["email_verified"] = emailVerified }
        if let name { claims["name"] = .string(name) }
        if let picture { claims["picture"] = .string(picture) }
        if let nonce { claims["nonce"] = .string(nonce) }
        claims.merge(extraClaims) { _, extra in extra }
        let (key, signingKid) = state.values.withLock { values in (values.keys[values.signingKid], values.signingKid) }
        return Self.sign(claims: claims, kid: kid ?? signingKid, with: key)
    }

    /// An RS256 token signed with a key this provider never publishes, under `kid`.
    public func idTokenSignedWithUnpublishedKey(kid: String, sub: String = "federated-user-1") -> String {
        let now = SystemClock().now().seconds
        let claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(sub), "iat": .integer(now),
            "exp": .integer(now + 3600),
        ]
        return Self.sign(claims: claims, kid: kid, with: Self.keyPool.last)
    }

    /// A token with any header and claims and the given signature bytes (for `alg: none`
    /// and other forgeries).
    public static func rawToken(header: [String: JSONValue], claims: [String: JSONValue], signature: [UInt8]) -> String {
        signingInput(header: header, claims: claims) + "." + Base64URL.encode(signature)
    }

    /// An HS256 token whose HMAC key is `secret` (the key-confusion attack uses the
    /// provider's public key PEM as the secret).
    public static func hs256Token(claims: [String: JSONValue], kid: String?, secret: String) -> String {
        var header: [String: JSONValue] = ["alg": .string("HS256"), "typ": .string("JWT")]
        if let kid { header["kid"] = .string(kid) }
        let input = signingInput(header: header, claims: claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return input + "." + Base64URL.encode(Array(mac))
    }

    /// The claims ``idToken(sub:email:emailVerified:name:picture:audience:issuer:expiresIn:issuedAt:nonce:kid:extraClaims:)``
    /// would sign, decoded back from a token (for building forgeries from a valid token).
    public static func claims(of token: String) -> [String: JSONValue] {
        ForeignJWS(token)?.claims ?? [:]
    }

    /// SHA-256 of `text` in lower-case hex: what Apple's and Firebase's clients put in an
    /// ID token's `nonce` for the raw nonce they send.
    public static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    private static func signingInput(header: [String: JSONValue], claims: [String: JSONValue]) -> String {
        Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(claims).serializedBytes())
    }

    private static func sign(claims: [String: JSONValue], kid: String, with key: _RSA.Signing.PrivateKey?) -> String {
        let header: [String: JSONValue] = ["alg": .string("RS256"), "typ": .string("JWT"), "kid": .string(kid)]
        let input = signingInput(header: header, claims: claims)
        let signature =
            (try? key?.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)).map { Array($0.rawRepresentation) }
            ?? []
        return input + "." + Base64URL.encode(signature)
    }

    // MARK: Server

    private static func makeRouter(_ state: SharedState) -> Router<BasicRequestContext> {
        let router = Router()
        router.get(".well-known/openid-configuration") { request, _ -> Response in
            let base = "http://\(request.head.authority ?? "127.0.0.1")"
            return json(
                .object([
                    "issuer": .string(base), "jwks_uri": .string(base + "/jwks"),
                    "userinfo_endpoint": .string(base + "/userinfo"),
                    "id_token_signing_alg_values_supported": .array([.string("RS256")]),
                ]))
        }
        router.get("jwks") { _, _ -> Response in
            let (failing, delay, maxAge, keys) = state.values.withLock { values in
                values.jwksFetches += 1
                let keys = values.published.compactMap { kid in values.keys[kid].map { (kid, $0) } }
                return (values.jwksFailing, values.jwksDelay, values.jwksMaxAge, keys)
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            if failing { return Response(status: .serviceUnavailable) }
            let jwks: [JSONValue] = keys.compactMap { kid, key in
                VerificationKey(rsaPEM: key.publicKey.pemRepresentation, kid: kid)?.jwk
            }
            var response = json(.object(["keys": .array(jwks)]))
            if let maxAge { response.headers[.cacheControl] = "public, max-age=\(maxAge)" }
            return response
        }
        router.get("userinfo") { request, _ -> Response in
            let authorization = request.headers[.authorization] ?? ""
            guard authorization.hasPrefix("Bearer "),
                let profile = state.values.withLock({ $0.profiles[String(authorization.dropFirst(7))] })
            else {
                return json(.object(["error": .string("invalid_token")]), status: .unauthorized)
            }
            return json(profile)
        }
        router.get("hang") { _, _ -> Response in
            try await Task.sleep(for: .seconds(3600))
            return Response(status: .noContent)
        }
        router.get("drip") { _, _ -> Response in
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    while !Task.isCancelled {
                        try await writer.write(ByteBuffer(bytes: [UInt8(ascii: " ")]))
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    try await writer.finish(nil)
                })
        }
        router.get("redirect") { _, _ -> Response in
            var response = Response(status: .found)
            response.headers[.location] = "http://example.com/jwks"
            return response
        }
        router.get("large") { _, _ -> Response in
            Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: 2 << 20)))
        }
        router.get("large-stream") { _, _ -> Response in
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    for _ in 0..<32 { try await writer.write(ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 << 10)) }
                    try await writer.finish(nil)
                })
        }
        router.get("status/:code") { _, context -> Response in
            let code = context.parameters.get("code").flatMap(Int.init) ?? 500
            return Response(status: HTTPResponse.Status(code: code))
        }
        return router
    }

    private static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serializedBytes())))
    }
}

/// A throwaway CA and a server certificate it issued for one host name (P-256, valid for
/// an hour), as NIOSSL configurations for the server and for a client trusting the CA.
private struct TestCertificates {
    let server: TLSConfiguration
    let client: TLSConfiguration

    init(host: String) throws {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Portcullis test CA") }
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 3600, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(leafKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 3600, issuer: caName,
            subject: try DistinguishedName { CommonName(host) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName(host)])
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        func nio(_ certificate: Certificate) throws -> NIOSSLCertificate {
            try NIOSSLCertificate(bytes: Array(certificate.serializeAsPEM().pemString.utf8), format: .pem)
        }
        server = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try nio(leaf))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem)))
        var client = TLSConfiguration.makeClientConfiguration()
        client.trustRoots = .certificates([try nio(ca)])
        self.client = client
    }
}
