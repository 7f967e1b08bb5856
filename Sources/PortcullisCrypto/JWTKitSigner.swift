import JWTKit

/// A ``TokenSigner`` over one of jwt-kit's algorithms (swift-crypto underneath): ES256 and EdDSA.
struct JWTKitSigner: TokenSigner {
    let algorithm: any JWTAlgorithm

    /// ES256 with a PEM (SEC1 or PKCS#8) P-256 private key.
    static func es256(pem: String) async throws(SigningFailure) -> JWTKitSigner {
        try await make { collection, kid in await collection.add(ecdsa: try ES256PrivateKey(pem: pem), kid: kid) }
    }

    /// EdDSA with an Ed25519 private key given as its base64url `d`.
    static func edDSA(d: String) async throws(SigningFailure) -> JWTKitSigner {
        try await make { collection, kid in await collection.add(eddsa: try EdDSA.PrivateKey(d: d, curve: .ed25519), kid: kid) }
    }

    /// jwt-kit hands out its signers only through a key collection, so `add` puts the
    /// key into a throwaway one under a placeholder `kid`.
    private static func make(
        _ add: (JWTKeyCollection, JWKIdentifier) async throws -> Void
    ) async throws(SigningFailure) -> JWTKitSigner {
        let collection = JWTKeyCollection()
        let kid = JWKIdentifier(string: "key")
        do {
            try await add(collection, kid)
            return JWTKitSigner(algorithm: try await collection.getKey(for: kid))
        } catch {
            throw .invalidKey
        }
    }

    func sign(_ input: [UInt8]) throws(SigningFailure) -> [UInt8] {
        do {
            return try algorithm.sign(input)
        } catch {
            throw .library(String(describing: error))
        }
    }

    func verify(_ signature: [UInt8], signs input: [UInt8]) -> Bool {
        // jwt-kit throws for signatures it cannot parse (an ECDSA signature of the wrong
        // length, say): for the keyring that is just a signature that does not verify.
        (try? algorithm.verify(signature, signs: input)) == true
    }
}
