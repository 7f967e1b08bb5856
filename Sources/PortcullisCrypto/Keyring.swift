public import PortcullisCore
public import PortcullisJSON

/// One tenant's signing keys, ready to sign and verify without locks or I/O.
///
/// Each key's ``TokenSigner`` does the cryptography (``RSASigner`` on OpenSSL's libcrypto
/// for RS256, jwt-kit for ES256 and EdDSA); the keyring assembles compact JWS itself, so
/// signing and verifying never queue behind an actor: every event loop works in parallel
/// on the hot paths.
public struct Keyring: Sendable {
    /// One key held by the keyring, with the signer built from its private half.
    private struct HeldKey: Sendable {
        let kid: String
        let algorithm: TenantSettings.SigningAlgorithm
        let signer: any TokenSigner

        init(_ key: SigningKey) async throws(SigningFailure) {
            self.kid = key.kid
            self.algorithm = key.algorithm
            self.signer = try await key.makeSigner()
        }
    }

    private let active: HeldKey
    private let upcoming: (key: HeldKey, signsFrom: Int64)?
    private let held: [String: HeldKey]
    /// `{"keys": [...]}` with every published public key, the next one included.
    public let jwks: JSONValue
    /// About the heap the keyring holds (its signers and its JWKS), for the byte bound of the
    /// cache that keeps it.
    public let estimatedBytes: Int

    /// The key new tokens are signed with (until ``next`` takes over).
    public var activeKid: String { active.kid }
    /// Its algorithm.
    public var activeAlgorithm: TenantSettings.SigningAlgorithm { active.algorithm }
    /// A key published ahead of a scheduled rotation, and the second it starts signing.
    ///
    /// Verifiers cache the JWKS (`max-age`); publishing the next key before it signs means
    /// none of them meets a token whose `kid` it has not seen.
    public var next: (kid: String, algorithm: TenantSettings.SigningAlgorithm, signsFrom: Int64)? {
        upcoming.map { ($0.key.kid, $0.key.algorithm, $0.signsFrom) }
    }

    /// Why a token did not verify.
    public enum VerificationFailure: Error, Equatable {
        /// Not three base64url parts of JSON, or a header without `alg`/`kid`.
        case malformed
        /// No key with that `kid` (including another tenant's keys), or `alg` differs from the key's.
        case unknownKey
        /// The signature does not match.
        case badSignature
    }

    /// Builds a keyring; `active` must be among `keys`. `next`, if any, signs from the
    /// Unix second `signsFrom` on. Throws when a key's private half does not load.
    public init(active: SigningKey, keys: [SigningKey], next: (key: SigningKey, signsFrom: Int64)? = nil) async throws(SigningFailure) {
        let activeKey = try await HeldKey(active)
        var held = [active.kid: activeKey]
        if let next {
            let nextKey = try await HeldKey(next.key)
            held[next.key.kid] = nextKey
            self.upcoming = (nextKey, next.signsFrom)
        } else {
            self.upcoming = nil
        }
        for key in keys where held[key.kid] == nil {
            held[key.kid] = try await HeldKey(key)
        }
        self.active = activeKey
        self.held = held
        var published = [active.publicJWK]
        if let next { published.append(next.key.publicJWK) }
        published += keys.filter { $0.kid != active.kid && $0.kid != next?.key.kid }.map(\.publicJWK)
        self.jwks = .object(["keys": .array(published)])
        self.estimatedBytes = held.values.reduce(512) { $0 + Self.estimatedBytes(of: $1.algorithm) }
    }

    /// One held key: its signer (an RSA private key with its precomputed values is the
    /// heaviest, an Ed25519 key the lightest) and its public JWK.
    private static func estimatedBytes(of algorithm: TenantSettings.SigningAlgorithm) -> Int {
        switch algorithm {
        case .rs256: 6_144
        case .es256: 2_048
        case .edDSA: 1_536
        }
    }

    /// Signs `payload` with the key that signs at the Unix second `now` (``next`` once its
    /// time has come): header `alg`, `kid`, `typ: JWT`.
    public func sign(_ payload: JSONValue, now: Int64) throws(SigningFailure) -> String {
        let key = upcoming.flatMap { now >= $0.signsFrom ? $0.key : nil } ?? active
        let header = JSONValue.object([
            "alg": .string(key.algorithm.rawValue), "kid": .string(key.kid), "typ": .string("JWT"),
        ])
        let signingInput = Base64URL.encode(header.serializedBytes()) + "." + Base64URL.encode(payload.serializedBytes())
        let signature = try key.signer.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies the signature of a compact JWS and returns its payload (claims are the caller's to check).
    public func verify(_ token: String) throws(VerificationFailure) -> JSONValue {
        guard let jws = CompactJWS(token) else { throw .malformed }
        try verify(jws)
        return .object(jws.claims)
    }

    /// Verifies an already-split token's signature against this keyring's keys: the gateway's
    /// own tokens name their key (`kid`).
    public func verify(_ jws: CompactJWS) throws(VerificationFailure) {
        guard let kid = jws.kid, let key = held[kid], key.algorithm.rawValue == jws.algorithm else { throw .unknownKey }
        guard key.signer.verify(jws.signature, signs: jws.signingInput) else { throw .badSignature }
    }
}
