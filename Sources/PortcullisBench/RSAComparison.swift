import Crypto
import CryptoExtras
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON

/// `portcullis-bench rsa`: RS256 with one RSA-2048 key and one signing input on the
/// system's OpenSSL libcrypto (the daemon's ``RSASigner``) and on swift-crypto's
/// BoringSSL (what jwt-kit's RSA signer calls), so the two rates compare the libraries
/// alone (BENCHMARKS.md, "Issue 12: RSA signing, OpenSSL libcrypto vs swift-crypto").
enum RSAComparison {
    /// One signature of an ID token's signing input with `claims` made, or checked, by
    /// `library` (`libcrypto` or `swift-crypto`); `nil` for a library or operation
    /// (`sign`, `verify`) it does not know.
    static func work(library: String, operation: String, claims: JSONValue) throws -> (@Sendable () -> Void)? {
        let header = JSONValue.object(["alg": "RS256", "kid": "bench", "typ": "JWT"])
        let input = Array((Base64URL.encode(header.serializedBytes()) + "." + Base64URL.encode(claims.serializedBytes())).utf8)
        let pem = try SigningKey.generate(.rs256).privateMaterial
        switch (library, operation) {
        case ("libcrypto", "sign"):
            let signer = try RSASigner(pem: pem)
            return { _ = try? signer.sign(input) }
        case ("libcrypto", "verify"):
            let signer = try RSASigner(pem: pem)
            let signature = try signer.sign(input)
            return { precondition(signer.verify(signature, signs: input)) }
        case ("swift-crypto", "sign"):
            let key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
            return { _ = try? key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5) }
        case ("swift-crypto", "verify"):
            let key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
            let signature = try key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
            let publicKey = key.publicKey
            return {
                precondition(publicKey.isValidSignature(signature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5))
            }
        default:
            return nil
        }
    }
}
