public import Foundation
import JWTKit
public import PortcullisCore

/// One tenant's signing keys, ready to sign and verify without locks or I/O.
///
/// jwt-kit does the cryptography; the keyring holds its per-key signers and
/// assembles compact JWS itself, so signing and verifying never queue behind
/// an actor: every event loop works in parallel on the hot paths.
public struct Keyring: Sendable {
    /// The key new tokens are signed with.
    public let activeKid: String
    /// Its algorithm.
    public let activeAlgorithm: TenantSettings.SigningAlgorithm
    private let signers: [String: (algorithm: TenantSettings.SigningAlgorithm, signer: any JWTAlgorithm)]
    /// `{"keys": [...]}` with every published public key.
    public let jwks: JSONValue

    /// Why a token did not verify.
    public enum VerificationFailure: Error, Equatable {
        /// Not three base64url parts of JSON, or a header without `alg`/`kid`.
        case malformed
        /// No key with that `kid` (including another tenant's keys), or `alg` differs from the key's.
        case unknownKey
        /// The signature does not match.
        case badSignature
    }

    /// Builds a keyring; `active` must be among `keys`.
    public init(active: SigningKey, keys: [SigningKey]) async throws {
        var signers: [String: (TenantSettings.SigningAlgorithm, any JWTAlgorithm)] = [:]
        for key in keys + [active] where signers[key.kid] == nil {
            signers[key.kid] = (key.algorithm, try await key.makeSigner())
        }
        self.signers = signers
        self.activeKid = active.kid
        self.activeAlgorithm = active.algorithm
        var published = [active.publicJWK]
        published += keys.filter { $0.kid != active.kid }.map(\.publicJWK)
        self.jwks = .object(["keys": .array(published)])
    }

    /// Signs `payload` with the active key: header `alg`, `kid`, `typ: JWT`.
    public func sign(_ payload: JSONValue) throws -> String {
        guard let (algorithm, signer) = signers[activeKid] else { throw VerificationFailure.unknownKey }
        let header = JSONValue.object([
            "alg": .string(algorithm.rawValue), "kid": .string(activeKid), "typ": .string("JWT"),
        ])
        let signingInput = Base64URL.encode(Array(header.serialized().utf8)) + "." + Base64URL.encode(Array(payload.serialized().utf8))
        let signature = try signer.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies the signature of a compact JWS and returns its payload (claims are the caller's to check).
    public func verify(_ token: String) throws(VerificationFailure) -> JSONValue {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count < 16_384,
            let headerBytes = Base64URL.decode(String(decoding: parts[0], as: UTF8.self)),
            case .object(let header)? = try? JSONValue.parse(headerBytes),
            case .string(let alg)? = header["alg"], case .string(let kid)? = header["kid"],
            let payloadBytes = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
            let signature = Base64URL.decode(String(decoding: parts[2], as: UTF8.self))
        else { throw .malformed }
        guard let (algorithm, signer) = signers[kid], algorithm.rawValue == alg else { throw .unknownKey }
        let signingInput = parts[0] + [UInt8(ascii: ".")] + parts[1]
        guard (try? signer.verify(signature, signs: signingInput)) == true else { throw .badSignature }
        guard let payload = try? JSONValue.parse(payloadBytes) else { throw .malformed }
        return payload
    }
}
