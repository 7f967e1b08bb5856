public import AsyncHTTPClient
public import Foundation

/// How an ``IDTokenVerifier`` reaches the gateway and which tokens it accepts.
///
/// ```swift
/// let configuration = VerifierConfiguration(
///     gatewayURL: "http://127.0.0.1:8080", publicURL: "https://auth.example.com",
///     projectId: "my-project", acceptedTenants: .tenant("acme-x7k2p"))
/// ```
public struct VerifierConfiguration: Sendable {
    /// Where the gateway is reached for JWKS and revocation checks, e.g.
    /// `http://127.0.0.1:8080` (no trailing slash needed).
    public var gatewayURL: String
    /// The gateway's `public_url`, the prefix of every issuer, e.g. `https://auth.example.com`.
    /// It may differ from ``gatewayURL`` (a backend often reaches the gateway privately).
    public var publicURL: String
    /// The project id: every token's `aud`, and part of every issuer and JWKS path.
    public var projectId: String
    /// Whose tokens are accepted.
    public var acceptedTenants: AcceptedTenants
    /// How long after `exp` a token is still accepted, for clock skew. Default 5 s.
    public var expirationLeeway: Duration
    /// How far in the future `iat`, `auth_time` and `nbf` may be, for clock skew.
    /// Default 60 s, as the gateway allows.
    public var issuedAtLeeway: Duration
    /// The HTTP client for JWKS fetches and revocation checks. Default `HTTPClient.shared`.
    public var httpClient: HTTPClient
    /// The limit on each request to the gateway, connection included. Default 10 s.
    public var requestTimeout: Duration
    /// The least time between two JWKS refetches caused by tokens with an unknown `kid`,
    /// per issuer. Default 10 s.
    ///
    /// An unknown `kid` causes one refetch (a key rotated in on demand becomes known at once);
    /// within this interval after such a refetch, further unknown `kid`s are refused without
    /// asking the gateway, so forged `kid`s cannot make the verifier hammer it.
    public var unknownKeyRefetchInterval: Duration
    /// How long a JWKS is cached when the gateway's answer has no `Cache-Control: max-age`.
    /// Default 60 s.
    public var defaultCacheDuration: Duration

    /// The time tokens are checked against (`exp`, `iat`, `auth_time`, `nbf`): the system's
    /// unless a test sets another.
    public var currentTime: @Sendable () -> Date

    /// A configuration; every parameter after `acceptedTenants` has a default.
    public init(
        gatewayURL: String, publicURL: String, projectId: String, acceptedTenants: AcceptedTenants,
        expirationLeeway: Duration = .seconds(5), issuedAtLeeway: Duration = .seconds(60), httpClient: HTTPClient = .shared,
        requestTimeout: Duration = .seconds(10), unknownKeyRefetchInterval: Duration = .seconds(10),
        defaultCacheDuration: Duration = .seconds(60), currentTime: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.gatewayURL = gatewayURL
        self.publicURL = publicURL
        self.projectId = projectId
        self.acceptedTenants = acceptedTenants
        self.expirationLeeway = expirationLeeway
        self.issuedAtLeeway = issuedAtLeeway
        self.httpClient = httpClient
        self.requestTimeout = requestTimeout
        self.unknownKeyRefetchInterval = unknownKeyRefetchInterval
        self.defaultCacheDuration = defaultCacheDuration
        self.currentTime = currentTime
    }

    /// The issuer of `tenant`'s tokens (`nil`: the project's own users).
    public func issuer(tenant: String?) -> String {
        let base = Self.trimmed(publicURL) + "/" + projectId
        return tenant.map { base + "/tenants/" + $0 } ?? base
    }

    /// Where `tenant`'s JWKS is fetched (`nil`: the project's own users).
    func jwksURL(tenant: String?) -> String {
        let base = Self.trimmed(gatewayURL) + "/v1/projects/" + projectId
        return tenant.map { base + "/tenants/" + $0 + "/jwks" } ?? base + "/jwks"
    }

    /// The gateway's forward-auth endpoint with a revocation check.
    var revocationCheckURL: String {
        Self.trimmed(gatewayURL) + "/v1/verify?checkRevoked=true"
    }

    private static func trimmed(_ url: String) -> String {
        var url = Substring(url)
        while url.hasSuffix("/") { url = url.dropLast() }
        return String(url)
    }
}
