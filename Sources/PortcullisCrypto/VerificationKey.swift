import Crypto
import CryptoExtras
import Foundation
import PortcullisCore
public import PortcullisJSON

/// A public key that checks JWS signatures made by someone else: an identity provider's
/// JWKS entry, or a customer's service account that signs custom tokens.
///
/// Only RS256 (RSA of 2048 to 4096 bits) and ES256 are accepted; `alg: none`, HMAC and every other
/// algorithm have no key here, so a token naming them never verifies.
public struct VerificationKey: Sendable {
    /// The key's id (`kid`), if it has one.
    public let kid: String?
    /// `RS256` or `ES256`.
    public let algorithm: String
    private let key: Key

    /// RSA moduli accepted: at least 2048 bits, and at most 4096, so that a key published
    /// by a tenant admin's endpoint cannot make each verification cost many times a normal one.
    static let acceptedRSASizes = 2048...4096

    private enum Key: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
    }

    /// Reads one JWK; `nil` for key types, curves or algorithms Portcullis does not accept,
    /// and for keys meant for encryption (`use: enc`).
    public init?(jwk: JSONValue) {
        guard case .object(let fields) = jwk else { return nil }
        func text(_ name: String) -> String? { if case .string(let value)? = fields[name] { value } else { nil } }
        if let use = text("use"), use != "sig" { return nil }
        switch text("kty") {
        case "RSA":
            guard text("alg").map({ $0 == "RS256" }) ?? true,
                let modulus = text("n").flatMap(Base64URL.decode), let exponent = text("e").flatMap(Base64URL.decode),
                let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent), Self.acceptedRSASizes.contains(key.keySizeInBits)
            else { return nil }
            self.init(kid: text("kid"), algorithm: "RS256", key: .rsa(key))
        case "EC":
            guard text("crv") == "P-256", text("alg").map({ $0 == "ES256" }) ?? true,
                let x = text("x").flatMap(Base64URL.decode), let y = text("y").flatMap(Base64URL.decode),
                x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
            else { return nil }
            self.init(kid: text("kid"), algorithm: "ES256", key: .p256(key))
        default:
            return nil
        }
    }

    /// Reads an RSA public key in PEM (`BEGIN PUBLIC KEY` or `BEGIN RSA PUBLIC KEY`) for RS256;
    /// `nil` unless it parses and has 2048 to 4096 bits.
    public init?(rsaPEM pem: String, kid: String?) {
        guard let key = try? _RSA.Signing.PublicKey(pemRepresentation: pem), Self.acceptedRSASizes.contains(key.keySizeInBits) else {
            return nil
        }
        self.init(kid: kid, algorithm: "RS256", key: .rsa(key))
    }

    private init(kid: String?, algorithm: String, key: Key) {
        self.kid = kid
        self.algorithm = algorithm
        self.key = key
    }

    /// The key as a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), for storage.
    public var pemRepresentation: String {
        switch key {
        case .rsa(let key): key.pemRepresentation
        case .p256(let key): key.pemRepresentation
        }
    }

    /// The public JWK (`kty`, `alg`, `use`, `kid`, and the key's parameters).
    public var jwk: JSONValue? {
        var fields: [String: JSONValue] = ["alg": .string(algorithm), "use": .string("sig")]
        if let kid { fields["kid"] = .string(kid) }
        switch key {
        case .rsa(let key):
            guard let primitives = try? key.getKeyPrimitives() else { return nil }
            fields["kty"] = .string("RSA")
            fields["n"] = .string(Base64URL.encode(Array(primitives.modulus)))
            fields["e"] = .string(Base64URL.encode(Array(primitives.publicExponent)))
        case .p256(let key):
            let raw = Array(key.rawRepresentation)
            fields["kty"] = .string("EC")
            fields["crv"] = .string("P-256")
            fields["x"] = .string(Base64URL.encode(Array(raw[0..<32])))
            fields["y"] = .string(Base64URL.encode(Array(raw[32..<64])))
        }
        return .object(fields)
    }

    /// Whether `signature` over `input` verifies under this key with the token's `alg`
    /// (which must be this key's algorithm).
    public func verify(_ signature: [UInt8], signs input: [UInt8], algorithm: String) -> Bool {
        guard algorithm == self.algorithm else { return false }
        switch key {
        case .rsa(let key):
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        case .p256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: input)
        }
    }
}
