/// Signs JWS signing inputs with one private key, and checks signatures made with it.
///
/// The ``Keyring`` holds one signer per `kid` and assembles compact JWS itself, so a
/// signer only turns bytes into a signature and back, and each library sits behind this
/// protocol: ``RSASigner`` on OpenSSL's libcrypto for RS256, jwt-kit over swift-crypto.
/// Signers are called from every event loop at once.
public protocol TokenSigner: Sendable {
    /// The signature of `input`, the JWS signing input (`header.payload`, base64url).
    func sign(_ input: [UInt8]) throws(SigningFailure) -> [UInt8]

    /// Whether `signature` is this key's signature of `input`; never throws, a
    /// signature that cannot even be parsed is simply not valid.
    func verify(_ signature: [UInt8], signs input: [UInt8]) -> Bool
}

/// Why a key could not be loaded or made, or a signature could not be produced.
public enum SigningFailure: Error, Equatable, Sendable {
    /// The stored private key does not parse, or is not a key of the algorithm it is stored as.
    case invalidKey
    /// The cryptographic library refused the operation; the text is its own error
    /// report (OpenSSL's error queue, or jwt-kit's error), never key material.
    case library(String)
}
