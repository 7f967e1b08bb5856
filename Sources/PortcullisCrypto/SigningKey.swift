import JWTKit
public import PortcullisCore
public import PortcullisJSON

/// One ID-token signing key: its id, algorithm, public JWK and (sealed) private half.
public struct SigningKey: Sendable {
    /// The `kid`.
    public let kid: String
    /// RS256, ES256 or EdDSA.
    public let algorithm: TenantSettings.SigningAlgorithm
    /// The public key as a JWK (`kty`, `kid`, `alg`, `use`, and the key's parameters).
    public let publicJWK: JSONValue
    /// The private key's serialized form (PEM for RSA and EC, base64url `d` for Ed25519;
    /// RSA keys made before libcrypto signed them are PKCS#1 PEM, newer ones PKCS#8).
    /// Only ever stored sealed under the master key.
    public let privateMaterial: String

    /// Generates a key pair. RSA keys are 2048 bits.
    public static func generate(_ algorithm: TenantSettings.SigningAlgorithm) throws -> SigningKey {
        let kid = SecretToken.random(byteCount: 15)
        switch algorithm {
        case .rs256:
            let key = try RSASigner.generate()
            let (modulus, exponent) = try key.publicComponents()
            return SigningKey(
                kid: kid, algorithm: algorithm,
                publicJWK: jwk(kid: kid, alg: "RS256", ["kty": "RSA", "n": Base64URL.encode(modulus), "e": Base64URL.encode(exponent)]),
                privateMaterial: try key.pemRepresentation())
        case .es256:
            let key = ES256PrivateKey()
            guard let (x, y) = key.parameters else { throw MasterKey.Failure.cannotOpen }
            return SigningKey(
                kid: kid, algorithm: algorithm,
                publicJWK: jwk(kid: kid, alg: "ES256", ["kty": "EC", "crv": "P-256", "x": x, "y": y]),
                privateMaterial: key.pemRepresentation)
        case .edDSA:
            let key = try EdDSA.PrivateKey(curve: .ed25519)
            return SigningKey(
                kid: kid, algorithm: algorithm,
                publicJWK: jwk(
                    kid: kid, alg: "EdDSA", ["kty": "OKP", "crv": "Ed25519", "x": Base64URL.encode(Array(key.publicKey.rawRepresentation))]),
                privateMaterial: Base64URL.encode(Array(key.rawRepresentation)))
        }
    }

    /// Reassembles a stored key.
    public init(kid: String, algorithm: TenantSettings.SigningAlgorithm, publicJWK: JSONValue, privateMaterial: String) {
        self.kid = kid
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.privateMaterial = privateMaterial
    }

    private static func jwk(kid: String, alg: String, _ parameters: [String: String]) -> JSONValue {
        var members = parameters.mapValues(JSONValue.string)
        members["kid"] = .string(kid)
        members["alg"] = .string(alg)
        members["use"] = .string("sig")
        return .object(members)
    }

    /// The signer for the private key (it also verifies); `invalidKey` when the stored
    /// material does not load as a key of ``algorithm``.
    func makeSigner() async throws(SigningFailure) -> any TokenSigner {
        switch algorithm {
        case .rs256: try RSASigner(pem: privateMaterial)
        case .es256: try await JWTKitSigner.es256(pem: privateMaterial)
        case .edDSA: try await JWTKitSigner.edDSA(d: privateMaterial)
        }
    }
}
