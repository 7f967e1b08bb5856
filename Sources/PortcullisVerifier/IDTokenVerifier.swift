import Foundation
import JWTKit

/// Verifies the gateway's ID tokens in a Swift backend, from the issuers' JWKS, without the
/// gateway's database.
///
/// ```swift
/// let verifier = IDTokenVerifier(configuration: VerifierConfiguration(
///     gatewayURL: "http://127.0.0.1:8080", publicURL: "https://auth.example.com",
///     projectId: "my-project", acceptedTenants: .anyTenant))
/// let identity = try await verifier.verify(idToken)
/// logger.info("signed in", metadata: ["uid": "\(identity.uid)"])
/// ```
///
/// A verification checks, in order: the token's form (a compact JWS of at most 16 KiB, no
/// `crit` header), its `alg` (RS256, ES256 or EdDSA: never `none`, never HMAC), its tenant
/// against ``VerifierConfiguration/acceptedTenants``, its `kid` against the tenant's JWKS
/// (one refetch when unknown), that `alg` is the key's, the signature, then the claims:
/// `iss`, `aud`, `firebase.tenant`, `sub`, `exp`, `iat`, `auth_time`, `nbf`.
///
/// Copies share one JWKS cache; make one verifier per configuration and keep it.
public struct IDTokenVerifier: Sendable {
    /// The signing algorithms the gateway uses and this verifier accepts.
    public static let supportedAlgorithms: Set<String> = ["RS256", "ES256", "EdDSA"]

    /// What this verifier accepts and where it fetches keys.
    public let configuration: VerifierConfiguration
    private let gateway: GatewayClient
    private let cache: JWKSCache

    /// A verifier with an empty JWKS cache.
    public init(configuration: VerifierConfiguration) {
        self.init(configuration: configuration, now: { .now })
    }

    /// A verifier whose JWKS cache reads the time from `now` (tests move it instead of
    /// sleeping through max-ages and refetch intervals).
    package init(configuration: VerifierConfiguration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.configuration = configuration
        self.gateway = GatewayClient(configuration: configuration)
        self.cache = JWKSCache(gateway: gateway, now: now)
    }

    /// Verifies `token` and returns whom it identifies.
    ///
    /// - Parameters:
    ///   - token: a compact ID token, without `Bearer `.
    ///   - checkRevoked: after the local checks, also ask the gateway (`GET /v1/verify?checkRevoked=true`)
    ///     whether the session was revoked or the user disabled or deleted since the token
    ///     was issued: one request per call, never cached.
    /// - Throws: ``TokenVerificationError``; ``TokenVerificationError/isUnavailable`` tells a
    ///   gateway failure (answer 503) from a refused token (answer 401).
    public func verify(_ token: String, checkRevoked: Bool = false) async throws(TokenVerificationError) -> VerifiedIdentity {
        let parsed = try CompactToken(token)
        let tenant = try parsed.claimedTenant()
        guard configuration.acceptedTenants.accepts(tenant) else { throw .wrongTenant }
        let key = try await key(for: parsed, tenant: tenant)
        guard key.algorithm == parsed.algorithm else { throw .algorithmMismatch }
        guard (try? key.verifier.verify(parsed.signature, signs: parsed.signingInput)) == true else { throw .badSignature }
        let identity = try ClaimsValidation.identity(
            from: parsed.claims, tenant: tenant, configuration: configuration, now: configuration.currentTime())
        if checkRevoked { try await gateway.checkRevoked(token, tenant: tenant) }
        return identity
    }

    /// The key the token's `kid` names in its tenant's JWKS, refetched once when unknown.
    private func key(for token: CompactToken, tenant: String?) async throws(TokenVerificationError) -> KeySet.Key {
        let url = configuration.jwksURL(tenant: tenant)
        let keySet = try await cache.keySet(url, tenant: tenant)
        if let key = keySet.keys[token.keyId] { return key }
        guard let refreshed = try await cache.refreshed(url, tenant: tenant, after: keySet), let key = refreshed.keys[token.keyId] else {
            throw .unknownKeyId
        }
        return key
    }
}
