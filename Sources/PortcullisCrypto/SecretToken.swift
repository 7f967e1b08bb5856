import Crypto
import Foundation
import PortcullisCore
import PortcullisJSON

/// Random secrets, their hashes, and constant-time comparison.
///
/// Secrets handed to callers (admin keys, later refresh tokens) carry at least
/// 256 bits of randomness, so a plain SHA-256 is a sufficient at-rest hash:
/// there is nothing to brute-force.
public enum SecretToken {
    /// `count` random bytes from the system's CSPRNG, base64url without padding.
    public static func random(byteCount count: Int = 32) -> String {
        // Eight bytes per draw: each draw is a getrandom(2) call, and a byte at a time
        // made a new session cost 48 system calls.
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Base64URL.encode(Array(bytes.prefix(count)))
    }

    /// SHA-256 of the UTF-8 text.
    public static func hash(_ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
        return difference == 0
    }
}

/// A token's SHA-256, for remembering tokens by a small key instead of their text.
public struct TokenFingerprint: Hashable, Sendable {
    private let digest: SHA256Digest

    /// The fingerprint of `token`'s UTF-8 bytes.
    public init(_ token: String) {
        var token = token
        digest = token.withUTF8 { SHA256.hash(data: $0) }
    }
}

/// The secret form of an admin key: `pcak_<keyId>_<secret>`.
///
/// The key id travels inside the secret so the server finds the stored hash
/// with one indexed lookup, then compares hashes in constant time.
public struct AdminKeyCredential: Sendable {
    /// The prefix every admin key secret starts with (lets secret scanners spot leaks).
    public static let prefix = "pcak_"

    /// The key's public id.
    public let keyId: String
    /// The whole secret, shown to the operator once.
    public let secret: String

    /// A fresh credential: a 16-character id and 256 random bits.
    public static func generate() -> AdminKeyCredential {
        let keyId = SecretToken.random(byteCount: 12).lowercased()
            .replacingOccurrences(of: "-", with: "a").replacingOccurrences(of: "_", with: "b")
        return AdminKeyCredential(keyId: keyId, secret: "\(prefix)\(keyId)_\(SecretToken.random())")
    }

    /// The SHA-256 stored for this secret.
    public var secretHash: [UInt8] { SecretToken.hash(secret) }

    /// Splits a presented secret into the key id to look up and its hash; `nil` if malformed.
    public static func parse(_ presented: String) -> (keyId: String, secretHash: [UInt8])? {
        guard presented.hasPrefix(prefix), presented.utf8.count < 256 else { return nil }
        let body = presented.dropFirst(prefix.count)
        guard let separator = body.firstIndex(of: "_") else { return nil }
        let keyId = String(body[..<separator])
        guard keyId.count == 16, keyId.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) })
        else { return nil }
        return (keyId, SecretToken.hash(presented))
    }

    init(keyId: String, secret: String) {
        self.keyId = keyId
        self.secret = secret
    }
}
