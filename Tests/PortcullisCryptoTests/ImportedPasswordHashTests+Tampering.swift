import Foundation
import PortcullisCore
import Testing

@testable import PortcullisCrypto

/// Imported hashes with one part altered.
extension ImportedPasswordHashTests {
    @Test("a flipped bit of the hash, the salt, the separator or the key fails", arguments: names)
    func tampered(name: String) throws {
        let vector = try Self.vector(name)
        guard let parsed = StoredPasswordHash(parsing: try vector.stored()) else { throw SetupError(description: "unparsable") }
        var variants: [(String, StoredPasswordHash)] = []
        func flip(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            bytes[bytes.count / 2] ^= 0x01
            return bytes
        }
        switch parsed {
        case .firebaseScrypt(let memoryCost, let rounds, let salt, let separator, let key, let hash):
            variants.append(
                (
                    "hash",
                    .firebaseScrypt(
                        memoryCost: memoryCost, rounds: rounds, salt: salt, saltSeparator: separator, signerKey: key, hash: flip(hash))
                ))
            variants.append(
                (
                    "key",
                    .firebaseScrypt(
                        memoryCost: memoryCost, rounds: rounds, salt: salt, saltSeparator: separator, signerKey: flip(key), hash: hash)
                ))
            if !salt.isEmpty {
                variants.append(
                    (
                        "salt",
                        .firebaseScrypt(
                            memoryCost: memoryCost, rounds: rounds, salt: flip(salt), saltSeparator: separator, signerKey: key, hash: hash)
                    ))
            }
            if !separator.isEmpty {
                variants.append(
                    (
                        "separator",
                        .firebaseScrypt(
                            memoryCost: memoryCost, rounds: rounds, salt: salt, saltSeparator: flip(separator), signerKey: key, hash: hash)
                    ))
            }
            // The separator belongs after the salt, not before it.
            if !salt.isEmpty, !separator.isEmpty {
                variants.append(
                    (
                        "separator first",
                        .firebaseScrypt(
                            memoryCost: memoryCost, rounds: rounds, salt: separator + salt, saltSeparator: [], signerKey: key, hash: hash)
                    ))
            }
            variants.append(
                (
                    "other rounds",
                    .firebaseScrypt(
                        memoryCost: memoryCost, rounds: rounds % 8 + 1, salt: salt, saltSeparator: separator, signerKey: key, hash: hash)
                ))
        case .standardScrypt(let logN, let r, let p, let salt, let hash):
            variants.append(("hash", .standardScrypt(logN: logN, r: r, p: p, salt: salt, hash: flip(hash))))
            variants.append(("salt", .standardScrypt(logN: logN, r: r, p: p, salt: flip(salt), hash: hash)))
            variants.append(("other N", .standardScrypt(logN: logN + 1, r: r, p: p, salt: salt, hash: hash)))
        case .bcrypt(let text):
            // Character 10 is in the salt, 40 in the digest; `.` and `/` are both in bcrypt's alphabet.
            for (label, index) in [("salt", 10), ("hash", 40)] {
                var characters = Array(text)
                characters[index] = characters[index] == "." ? "/" : "."
                variants.append((label, .bcrypt(String(characters))))
            }
        case .pbkdf2SHA256(let rounds, let salt, let hash):
            variants.append(("hash", .pbkdf2SHA256(rounds: rounds, salt: salt, hash: flip(hash))))
            variants.append(("salt", .pbkdf2SHA256(rounds: rounds, salt: flip(salt), hash: hash)))
            variants.append(("other rounds", .pbkdf2SHA256(rounds: rounds + 1, salt: salt, hash: hash)))
            // A true prefix of the digest, below the 16 bytes a stored digest needs (a longer
            // prefix verifies, as PBKDF2's output is: the stored length is dkLen).
            variants.append(("truncated", .pbkdf2SHA256(rounds: rounds, salt: salt, hash: Array(hash.prefix(15)))))
        case .hmacSHA256(let order, let key, let salt, let hash):
            variants.append(("hash", .hmacSHA256(order: order, key: key, salt: salt, hash: flip(hash))))
            variants.append(("salt", .hmacSHA256(order: order, key: key, salt: flip(salt), hash: hash)))
            variants.append(("key", .hmacSHA256(order: order, key: flip(key), salt: salt, hash: hash)))
            let other: PasswordHashConfig.PasswordHashOrder = order == .passwordAndSalt ? .saltAndPassword : .passwordAndSalt
            variants.append(("order", .hmacSHA256(order: other, key: key, salt: salt, hash: hash)))
        }
        #expect(variants.count >= 2)
        for (label, variant) in variants {
            #expect(!Self.hasher.verify(vector.password, against: variant.encoded), "\(label) altered")
        }
    }
}
