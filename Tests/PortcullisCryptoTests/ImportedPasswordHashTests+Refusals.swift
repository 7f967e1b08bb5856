import Foundation
import PortcullisCore
import PortcullisJSON
import Testing

@testable import PortcullisCrypto

/// Imports and stored texts out of an algorithm's bounds.
extension ImportedPasswordHashTests {
    @Test("imports refuse hashes that cannot be their algorithm's")
    func refusedImports() throws {
        let key = [UInt8](repeating: 9, count: 64)
        let scrypt = PasswordHashConfig.firebaseScrypt(signerKey: key, saltSeparator: [7], rounds: 8, memoryCost: 14)
        let cases: [(String, PasswordHashConfig, [UInt8], AuthError.Code)] = [
            ("empty hash", .pbkdf2SHA256(rounds: 1000), [], .invalidPasswordHash),
            ("PBKDF2 digest of 15 bytes", .pbkdf2SHA256(rounds: 1000), [UInt8](repeating: 1, count: 15), .invalidPasswordHash),
            ("SCRYPT hash shorter than the signer key", scrypt, [UInt8](repeating: 1, count: 63), .invalidPasswordHash),
            ("SCRYPT hash longer than the signer key", scrypt, [UInt8](repeating: 1, count: 65), .invalidPasswordHash),
            (
                "STANDARD_SCRYPT hash not dkLen", .standardScrypt(cpuMemCost: 1024, blockSize: 8, parallelization: 1, dkLen: 32),
                [UInt8](repeating: 1, count: 64), .invalidPasswordHash
            ),
            (
                "HMAC digest of 20 bytes", .hmacSHA256(key: [1], order: .passwordAndSalt), [UInt8](repeating: 1, count: 20),
                .invalidPasswordHash
            ),
            ("bcrypt: not a bcrypt string", .bcrypt, Array("not a bcrypt hash".utf8), .invalidPasswordHash),
            (
                "bcrypt of cost 16", .bcrypt, Array("$2b$16$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO".utf8),
                .invalidPasswordHash
            ),
            (
                "bcrypt $2x$ (the buggy variant)", .bcrypt, Array("$2x$05$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO".utf8),
                .invalidPasswordHash
            ),
            ("bcrypt not UTF-8", .bcrypt, [0x24, 0x32, 0x62, 0x24, 0xFF], .invalidPasswordHash),
            ("PBKDF2 above Firebase's rounds", .pbkdf2SHA256(rounds: 120_001), [UInt8](repeating: 1, count: 32), .invalidHashRounds),
            (
                "SCRYPT above Firebase's memory cost",
                .firebaseScrypt(signerKey: key, saltSeparator: [], rounds: 8, memoryCost: 15), key, .invalidHashMemoryCost
            ),
        ]
        for (label, config, hash, code) in cases {
            let result = Result { () throws(AuthError) in
                try StoredPasswordHash.imported(config: config, passwordHash: hash, salt: [1, 2, 3])
            }
            guard case .failure(let error) = result else {
                Issue.record("\(label): imported")
                continue
            }
            #expect(error.code == code, "\(label): \(error)")
        }
        let bcrypt = "$2b$13$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO"
        #expect(try StoredPasswordHash.imported(config: .bcrypt, passwordHash: Array(bcrypt.utf8), salt: []) == bcrypt)
    }

    @Test("no imported hash costs more to verify than the largest scrypt a tenant may choose")
    func costBounds() throws {
        for cost in ["14", "15"] {
            let bcrypt = "$2b$\(cost)$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO"
            #expect(throws: AuthError.self, "bcrypt cost \(cost)") {
                try StoredPasswordHash.imported(config: .bcrypt, passwordHash: Array(bcrypt.utf8), salt: [])
            }
        }
        // 120,000 rounds: a 256-byte digest is the most; a 512-byte one twice that.
        let long = [UInt8](repeating: 7, count: 512)
        #expect(throws: AuthError.self) {
            try StoredPasswordHash.imported(config: .pbkdf2SHA256(rounds: 120_000), passwordHash: long, salt: [1])
        }
        _ = try StoredPasswordHash.imported(
            config: .pbkdf2SHA256(rounds: 120_000), passwordHash: Array(long.prefix(256)), salt: [1])
        _ = try StoredPasswordHash.imported(config: .pbkdf2SHA256(rounds: 60_000), passwordHash: long, salt: [1])
        let stored = "$pbkdf2-sha256$i=120000$\(Base64URL.encode([1]))$\(Base64URL.encode(long))"
        #expect(StoredPasswordHash(parsing: stored) == nil)
    }

    @Test("stored texts out of an import's bounds, or malformed, never verify and never parse")
    func malformedStoredTexts() throws {
        let salt = Base64URL.encode([1, 2, 3, 4])
        let digest = Base64URL.encode([UInt8](repeating: 5, count: 32))
        let key = Base64URL.encode([UInt8](repeating: 6, count: 32))
        let malformed = [
            "$pbkdf2-sha256$i=120001$\(salt)$\(digest)",  // above Firebase's rounds
            "$pbkdf2-sha256$i=0$\(salt)$\(digest)",
            "$pbkdf2-sha256$i=1000$\(salt)$\(Base64URL.encode([1, 2, 3]))",  // 3-byte digest
            "$pbkdf2-sha256$i=1000,i=2$\(salt)$\(digest)",
            "$pbkdf2-sha256$i=+1000$\(salt)$\(digest)",
            "$pbkdf2-sha256$i=1000$\(salt)$\(digest)$",
            "$pbkdf2-sha256$i=1000$\(salt)$\(digest)=x",
            "$firebase-scrypt$ln=15,r=8$\(salt)$$\(key)$\(key)",  // above Firebase's memory cost
            "$firebase-scrypt$ln=14,r=8$\(salt)$$\(key)$\(Base64URL.encode([UInt8](repeating: 5, count: 31)))",  // shorter than the key
            "$firebase-scrypt$ln=14,r=8,p=1$\(salt)$$\(key)$\(key)",
            "$standard-scrypt$ln=17,r=8,p=1$\(salt)$\(digest)",  // 128 MiB
            "$standard-scrypt$ln=16,r=8,p=5$\(salt)$\(digest)",  // 20 × the default work
            "$standard-scrypt$ln=10,r=8,p=1$\(salt)$\(Base64URL.encode([1]))",
            "$hmac-sha256$o=xx$\(key)$\(salt)$\(digest)",
            "$hmac-sha256$o=ps$$\(salt)$\(digest)",  // no key
            "$hmac-sha256$o=ps$\(key)$\(salt)$\(Base64URL.encode([1, 2]))",
            "$2b$14$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO",  // bcrypt above cost 13
            "$2b$05$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmN",
            "$2b$5$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO",
            "$argon2id$v=19$m=65536,t=3,p=4$\(salt)$\(digest)",
        ]
        for text in malformed {
            #expect(StoredPasswordHash(parsing: text) == nil, "\(text)")
            #expect(!Self.hasher.verify("", against: text), "\(text)")
            #expect(Self.hasher.needsRehash(text), "\(text)")
        }
        // The native format is PasswordHasher's, not an import's.
        let native = try Self.hasher.hash("correct horse")
        #expect(StoredPasswordHash(parsing: native) == nil)
        #expect(!Self.hasher.needsRehash(native))
    }
}
