import Foundation
import JWTKit

/// One fetched JWKS: its verification keys by `kid`.
///
/// The keys are built by jwt-kit (`JWTKeyCollection.add(jwk:)`), each bound to one algorithm
/// (the JWK's `alg`, or the one its type implies); a token's `alg` must be its key's.
struct KeySet: Sendable {
    /// A key able to verify.
    struct Key: Sendable {
        /// RS256, ES256 or EdDSA.
        let algorithm: String
        /// jwt-kit's verifier for the key.
        let verifier: any JWTAlgorithm
    }

    /// The keys by `kid`; keys of other types or algorithms are left out.
    let keys: [String: Key]
    /// Increases with every fetch of the same JWKS, so a caller can tell a newer set from the one it saw.
    let generation: Int

    /// The keys of a JWKS document (`{"keys": [...]}`); keys that are not RS256, ES256 or
    /// EdDSA public keys with a `kid` are skipped.
    static func parse(_ document: Data, generation: Int) async throws -> KeySet {
        let jwks = try JSONDecoder().decode(LenientJWKS.self, from: document)
        let collection = JWTKeyCollection()
        var keys: [String: Key] = [:]
        for candidate in jwks.keys {
            guard var jwk = candidate.jwk, let kid = jwk.keyIdentifier, jwk.privateExponent == nil else { continue }
            guard let algorithm = jwk.algorithm ?? impliedAlgorithm(of: jwk),
                IDTokenVerifier.supportedAlgorithms.contains(algorithm.rawValue)
            else { continue }
            jwk.algorithm = algorithm
            guard (try? await collection.add(jwk: jwk)) != nil, let verifier = try? await collection.getKey(for: kid),
                verifier.name == algorithm.rawValue
            else { continue }
            keys[kid.string] = Key(algorithm: algorithm.rawValue, verifier: verifier)
        }
        return KeySet(keys: keys, generation: generation)
    }

    /// The algorithm a JWK without `alg` is for: RS256 for RSA, ES256 for P-256, EdDSA for Ed25519.
    private static func impliedAlgorithm(of jwk: JWK) -> JWK.Algorithm? {
        switch jwk.keyType {
        case .rsa: .rs256
        case .ecdsa where jwk.curve == .ecdsa(.p256): .es256
        case .octetKeyPair where jwk.curve == .eddsa(.ed25519): .eddsa
        default: nil
        }
    }
}

/// A JWKS whose unreadable keys (unknown types, missing parameters) are `nil` rather than a
/// failure of the whole set.
private struct LenientJWKS: Decodable {
    struct Candidate: Decodable {
        let jwk: JWK?
        init(from decoder: any Decoder) throws {
            jwk = try? JWK(from: decoder)
        }
    }
    let keys: [Candidate]
}
