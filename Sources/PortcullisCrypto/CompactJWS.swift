import PortcullisCore
public import PortcullisJSON

/// A compact JWS split and decoded once: header fields, claims, signature, all untrusted
/// until a key verifies it.
///
/// One parser for every token the gateway reads: its own ID tokens (``Keyring`` requires
/// their `kid`), identity providers' ID tokens and customers' custom tokens (several
/// custom-token SDKs send no `kid`; their verifiers try the signer's keys).
public struct CompactJWS: Sendable {
    /// The header's `alg`.
    public let algorithm: String
    /// The header's `kid`, if any.
    public let kid: String?
    /// The decoded payload's claims.
    public let claims: [String: JSONValue]
    /// `header.payload` as sent: what the signature covers.
    public let signingInput: [UInt8]
    /// The decoded signature.
    public let signature: [UInt8]

    /// Splits `token`; `nil` unless it is three base64url parts under 16 KiB, with a JSON
    /// header naming `alg` (and a string `kid` or none) and a JSON object payload.
    public init?(_ token: String) {
        let utf8 = Array(token.utf8)
        guard utf8.count < 16_384 else { return nil }
        let parts = utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(utf8: parts[0]),
            case .object(let header)? = try? JSONValue.parse(headerBytes),
            case .string(let alg)? = header["alg"],
            let payloadBytes = Base64URL.decode(utf8: parts[1]),
            case .object(let claims)? = try? JSONValue.parse(payloadBytes),
            let signature = Base64URL.decode(utf8: parts[2])
        else { return nil }
        switch header["kid"] {
        case nil, .null?: self.kid = nil
        case .string(let kid)?: self.kid = kid
        default: return nil
        }
        self.algorithm = alg
        self.claims = claims
        self.signature = signature
        self.signingInput = Array(utf8[0..<(parts[0].count + 1 + parts[1].count)])
    }

    /// Whether `key` signed this token (with the algorithm its header names).
    public func isSigned(by key: VerificationKey) -> Bool {
        key.verify(signature, signs: signingInput, algorithm: algorithm)
    }
}
