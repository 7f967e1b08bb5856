import PortcullisCore
import PortcullisJSON

/// A new RSA-2048 key pair for a service account the gateway issues: the private half
/// goes to the customer once, in the service-account file; only the public half is kept.
public struct ServiceAccountKeyPair: Sendable {
    /// The private key as unencrypted PKCS#8 PEM (`BEGIN PRIVATE KEY`): what Google's
    /// service-account files hold, and what google-auth and the Admin SDKs load.
    public let privateKeyPEM: String
    /// The public key that verifies the customer's custom tokens.
    public let publicKey: VerificationKey

    /// Generates a pair with libcrypto (public exponent 65537). An RSA-2048 key costs tens to
    /// hundreds of milliseconds of CPU: call it off the threads serving requests.
    public static func generate() throws -> ServiceAccountKeyPair {
        let signer = try RSASigner.generate(bits: 2048)
        let (modulus, exponent) = try signer.publicComponents()
        let jwk = JSONValue.object([
            "kty": .string("RSA"), "n": .string(Base64URL.encode(modulus)), "e": .string(Base64URL.encode(exponent)),
        ])
        guard let publicKey = VerificationKey(jwk: jwk) else { throw SigningFailure.invalidKey }
        return ServiceAccountKeyPair(privateKeyPEM: try signer.pemRepresentation(), publicKey: publicKey)
    }
}
