import Crypto
import CryptoExtras
import Foundation
import HummingbirdBcrypt
public import PortcullisCore
import PortcullisJSON

/// A password hash imported from another system (Firebase, or what Firebase itself imports),
/// stored with everything its verification needs, so that it verifies on sign-in until the
/// first successful one rehashes it to the tenant's scrypt (``PasswordHasher/needsRehash(_:)``
/// is true for every one of these).
///
/// The stored texts, self-describing like the native `$scrypt$…` (fields in base64url
/// without padding; an empty field is an empty byte string):
///
/// | algorithm | stored text |
/// |---|---|
/// | Firebase's modified scrypt | `$firebase-scrypt$ln=<memoryCost>,r=<rounds>$<salt>$<saltSeparator>$<signerKey>$<hash>` |
/// | RFC 7914 scrypt | `$standard-scrypt$ln=<log2 N>,r=<blockSize>,p=<parallelization>$<salt>$<hash>` (dkLen: the hash's length) |
/// | bcrypt | the hash itself: `$2a$`, `$2b$` or `$2y$`, cost, salt and digest |
/// | PBKDF2-HMAC-SHA256 | `$pbkdf2-sha256$i=<rounds>$<salt>$<hash>` |
/// | HMAC-SHA256 | `$hmac-sha256$o=<ps or sp>$<key>$<salt>$<hash>` (`ps`: password ‖ salt) |
///
/// Firebase's signer key and an HMAC key are project-wide secrets that every hash of the
/// import needs; they are stored with each hash rather than in a table of their own, so a
/// hash is verifiable alone and disappears with its rehash. They protect nothing the hash
/// does not: whoever reads the hash can already attack it offline with them.
///
/// Parsing re-checks `PasswordHashConfig`'s bounds, so a stored text can never make one
/// verification cost more than an import may.
public enum StoredPasswordHash: Sendable, Equatable {
    /// Firebase's modified scrypt (`PasswordHashConfig.firebaseScrypt(signerKey:saltSeparator:rounds:memoryCost:)`).
    case firebaseScrypt(memoryCost: Int, rounds: Int, salt: [UInt8], saltSeparator: [UInt8], signerKey: [UInt8], hash: [UInt8])
    /// RFC 7914 scrypt with N = 2^`logN`.
    case standardScrypt(logN: Int, r: Int, p: Int, salt: [UInt8], hash: [UInt8])
    /// A bcrypt hash string.
    case bcrypt(String)
    /// PBKDF2-HMAC-SHA256.
    case pbkdf2SHA256(rounds: Int, salt: [UInt8], hash: [UInt8])
    /// HMAC-SHA256 of password and salt concatenated in `order`.
    case hmacSHA256(order: PasswordHashConfig.PasswordHashOrder, key: [UInt8], salt: [UInt8], hash: [UInt8])

    /// The text to store for one imported user: its `passwordHash` and `salt` as the
    /// UploadAccount request gives them (decoded from base64), made with `config`.
    ///
    /// `INVALID_PASSWORD_HASH` when the hash cannot be one of `config`'s: empty, of the wrong
    /// length (Firebase scrypt: the signer key's; standard scrypt: `dkLen`; HMAC-SHA256: 32;
    /// PBKDF2: 16 to 1024 bytes), or for bcrypt not a `$2a$`/`$2b$`/`$2y$` string (which
    /// is what Identity Toolkit takes as a bcrypt `passwordHash`, salt included) or one of
    /// a cost above `PasswordHashConfig.maximumBcryptCost`. The salt may be empty;
    /// `INVALID_ARGUMENT` when it is over `PasswordHashConfig.maximumParameterBytes`.
    public static func imported(config: PasswordHashConfig, passwordHash: [UInt8], salt: [UInt8]) throws(AuthError) -> String {
        let config = try config.validated()
        guard !passwordHash.isEmpty else { throw AuthError(.invalidPasswordHash, detail: "empty") }
        guard salt.count <= PasswordHashConfig.maximumParameterBytes else {
            throw AuthError(.invalidArgument, detail: "salt: at most \(PasswordHashConfig.maximumParameterBytes) bytes")
        }
        let stored: StoredPasswordHash
        switch config {
        case .firebaseScrypt(let signerKey, let saltSeparator, let rounds, let memoryCost):
            guard passwordHash.count == signerKey.count else {
                throw AuthError(.invalidPasswordHash, detail: "a SCRYPT hash is as long as the signer key (\(signerKey.count) bytes)")
            }
            stored = .firebaseScrypt(
                memoryCost: memoryCost, rounds: rounds, salt: salt, saltSeparator: saltSeparator, signerKey: signerKey,
                hash: passwordHash)
        case .standardScrypt(let cpuMemCost, let blockSize, let parallelization, let dkLen):
            guard passwordHash.count == dkLen else {
                throw AuthError(.invalidPasswordHash, detail: "a STANDARD_SCRYPT hash is dkLen (\(dkLen)) bytes")
            }
            stored = .standardScrypt(
                logN: cpuMemCost.trailingZeroBitCount, r: blockSize, p: parallelization, salt: salt, hash: passwordHash)
        case .bcrypt:
            guard let text = String(validating: passwordHash, as: UTF8.self), Self.bcryptCost(text) != nil else {
                throw AuthError(
                    .invalidPasswordHash,
                    detail: "a BCRYPT hash is a $2a$, $2b$ or $2y$ string of cost 4 to \(PasswordHashConfig.maximumBcryptCost) "
                        + "(a higher cost costs more to verify than the largest scrypt allowed)")
            }
            stored = .bcrypt(text)
        case .pbkdf2SHA256(let rounds):
            guard Self.freeLengthDigest.contains(passwordHash.count) else {
                throw AuthError(.invalidPasswordHash, detail: "a PBKDF2_SHA256 hash is 16 to 1024 bytes")
            }
            guard PasswordHashConfig.pbkdf2CostIsBounded(rounds: rounds, digestBytes: passwordHash.count) else {
                throw AuthError(
                    .invalidPasswordHash,
                    detail: "a PBKDF2_SHA256 hash of \(passwordHash.count) bytes at \(rounds) rounds costs more to verify than "
                        + "the largest scrypt allowed (rounds * 32-byte blocks <= \(PasswordHashConfig.maximumPBKDF2Blocks))")
            }
            stored = .pbkdf2SHA256(rounds: rounds, salt: salt, hash: passwordHash)
        case .hmacSHA256(let key, let order):
            guard passwordHash.count == SHA256.byteCount else {
                throw AuthError(.invalidPasswordHash, detail: "an HMAC_SHA256 hash is 32 bytes")
            }
            stored = .hmacSHA256(order: order, key: key, salt: salt, hash: passwordHash)
        }
        return stored.encoded
    }

    /// The stored text.
    public var encoded: String {
        let b = Base64URL.encode
        switch self {
        case .firebaseScrypt(let memoryCost, let rounds, let salt, let saltSeparator, let signerKey, let hash):
            return "$firebase-scrypt$ln=\(memoryCost),r=\(rounds)$\(b(salt))$\(b(saltSeparator))$\(b(signerKey))$\(b(hash))"
        case .standardScrypt(let logN, let r, let p, let salt, let hash):
            return "$standard-scrypt$ln=\(logN),r=\(r),p=\(p)$\(b(salt))$\(b(hash))"
        case .bcrypt(let text):
            return text
        case .pbkdf2SHA256(let rounds, let salt, let hash):
            return "$pbkdf2-sha256$i=\(rounds)$\(b(salt))$\(b(hash))"
        case .hmacSHA256(let order, let key, let salt, let hash):
            return "$hmac-sha256$o=\(order == .passwordAndSalt ? "ps" : "sp")$\(b(key))$\(b(salt))$\(b(hash))"
        }
    }

    /// Reads a stored text; `nil` for anything but one of the formats above within the
    /// bounds an import accepts (the native `$scrypt$…` included: ``PasswordHasher`` reads that).
    public init?(parsing encoded: String) {
        if encoded.hasPrefix("$2") {
            guard Self.bcryptCost(encoded) != nil else { return nil }
            self = .bcrypt(encoded)
            return
        }
        // ["", name, parameters, fields…]: empty fields are empty byte strings, so keep them.
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        // The name first: the native `$scrypt$…` of every other sign-in passes through here.
        guard parts.count >= 5, parts[0].isEmpty, Self.names.contains(parts[1]) else { return nil }
        var bytes: [[UInt8]] = []
        for field in parts.dropFirst(3) {
            guard let decoded = Base64URL.decode(field), decoded.count <= PasswordHashConfig.maximumParameterBytes else { return nil }
            bytes.append(decoded)
        }
        let parameters = Self.parameters(parts[2])
        let parsed: StoredPasswordHash
        switch (parts[1], bytes.count) {
        case ("firebase-scrypt", 4):
            guard let values = parameters, values.keys.sorted() == ["ln", "r"], let logN = values["ln"], let r = values["r"],
                bytes[3].count == bytes[2].count,
                (try? PasswordHashConfig.firebaseScrypt(signerKey: bytes[2], saltSeparator: bytes[1], rounds: r, memoryCost: logN)
                    .validated()) != nil
            else { return nil }
            parsed = .firebaseScrypt(
                memoryCost: logN, rounds: r, salt: bytes[0], saltSeparator: bytes[1], signerKey: bytes[2], hash: bytes[3])
        case ("standard-scrypt", 2):
            guard let values = parameters, values.keys.sorted() == ["ln", "p", "r"], let logN = values["ln"], let r = values["r"],
                let p = values["p"], (1...20).contains(logN),
                (try? PasswordHashConfig.standardScrypt(cpuMemCost: 1 << logN, blockSize: r, parallelization: p, dkLen: bytes[1].count)
                    .validated()) != nil
            else { return nil }
            parsed = .standardScrypt(logN: logN, r: r, p: p, salt: bytes[0], hash: bytes[1])
        case ("pbkdf2-sha256", 2):
            guard let values = parameters, values.keys.sorted() == ["i"], let rounds = values["i"],
                PasswordHashConfig.pbkdf2Rounds.contains(rounds), Self.freeLengthDigest.contains(bytes[1].count),
                PasswordHashConfig.pbkdf2CostIsBounded(rounds: rounds, digestBytes: bytes[1].count)
            else { return nil }
            parsed = .pbkdf2SHA256(rounds: rounds, salt: bytes[0], hash: bytes[1])
        case ("hmac-sha256", 3):
            let order: PasswordHashConfig.PasswordHashOrder
            switch parts[2] {
            case "o=ps": order = .passwordAndSalt
            case "o=sp": order = .saltAndPassword
            default: return nil
            }
            guard !bytes[0].isEmpty, bytes[2].count == SHA256.byteCount else { return nil }
            parsed = .hmacSHA256(order: order, key: bytes[0], salt: bytes[1], hash: bytes[2])
        default:
            return nil
        }
        self = parsed
    }

    /// Whether `password` is the one this hash was made of, compared in constant time.
    /// CPU-bound (up to 16 × the default scrypt, or bcrypt of cost 15): call it on a ``HashingPool``.
    public func verify(_ password: String) -> Bool {
        let password = Array(password.utf8)
        switch self {
        case .firebaseScrypt(let memoryCost, let rounds, let salt, let saltSeparator, let signerKey, let hash):
            // firebase/scrypt's scryptenc_buf_saltlen: a 64-byte scrypt key, of which the first
            // 32 bytes key AES-256-CTR (counter block starting at zero) over the signer key.
            guard
                let derived = try? KDF.Scrypt.deriveKey(
                    from: password, salt: salt + saltSeparator, outputByteCount: 64, rounds: 1 << memoryCost, blockSize: rounds,
                    parallelism: 1),
                let nonce = try? AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16)),
                let encrypted = try? AES._CTR.encrypt(
                    signerKey, using: SymmetricKey(data: derived.withUnsafeBytes { Array($0.prefix(32)) }), nonce: nonce)
            else { return false }
            return SecretToken.constantTimeEquals(Array(encrypted), hash)
        case .standardScrypt(let logN, let r, let p, let salt, let hash):
            guard
                let derived = try? KDF.Scrypt.deriveKey(
                    from: password, salt: salt, outputByteCount: hash.count, rounds: 1 << logN, blockSize: r, parallelism: p)
            else { return false }
            return SecretToken.constantTimeEquals(derived.withUnsafeBytes { Array($0) }, hash)
        case .bcrypt(let text):
            // bcrypt reads the password as a C string: one with a NUL would be cut short there.
            guard !password.contains(0), Self.bcryptCost(text) != nil else { return false }
            // `$2y$` (PHP's name for the corrected algorithm) is `$2b$`; HummingbirdBcrypt
            // knows only the latter, and compares the whole string it recomputes.
            let normalized = text.hasPrefix("$2y$") ? "$2b$" + text.dropFirst(4) : text
            return Bcrypt.verify(String(decoding: password, as: UTF8.self), hash: normalized)
        case .pbkdf2SHA256(let rounds, let salt, let hash):
            // Imported hashes only, never new ones: their rounds are what the old system used
            // (at most Identity Toolkit's 120,000), below CryptoExtras' 210,000 floor for new keys.
            guard
                let derived = try? KDF.Insecure.PBKDF2.deriveKey(
                    from: password, salt: salt, using: .sha256, outputByteCount: hash.count, unsafeUncheckedRounds: rounds)
            else { return false }
            return SecretToken.constantTimeEquals(derived.withUnsafeBytes { Array($0) }, hash)
        case .hmacSHA256(let order, let key, let salt, let hash):
            let message = order == .passwordAndSalt ? password + salt : salt + password
            let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
            return SecretToken.constantTimeEquals(Array(code), hash)
        }
    }

    /// The names of the formats with fields (bcrypt's is its own).
    private static let names: Set<String> = ["firebase-scrypt", "standard-scrypt", "pbkdf2-sha256", "hmac-sha256"]

    /// PBKDF2's digest length is free: 16 bytes at least (a shorter one is guessable), 1024 at most.
    private static let freeLengthDigest = PasswordHashConfig.minimumDigestBytes...PasswordHashConfig.maximumParameterBytes

    /// The cost of a well-formed bcrypt hash (`$2a$`, `$2b$` or `$2y$`, two-digit cost from 4 to
    /// `PasswordHashConfig.maximumBcryptCost`, 53 characters of bcrypt's base64); else `nil`.
    static func bcryptCost(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
            bytes[6] == UInt8(ascii: "$"), let cost = Int(String(decoding: bytes[4...5], as: UTF8.self)),
            (4...PasswordHashConfig.maximumBcryptCost).contains(cost),
            bytes[7...].allSatisfy(Self.isBcryptBase64)
        else { return nil }
        return cost
    }

    private static func isBcryptBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: false
        }
    }

    /// `ln=14,r=8` → ["ln": 14, "r": 8]; `nil` unless every pair is `name=decimal digits`, each name once.
    private static func parameters(_ text: String) -> [String: Int]? {
        var values: [String: Int] = [:]
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            let kv = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard kv.count == 2, !kv[1].isEmpty, kv[1].utf8.count <= 9, kv[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(kv[1]), values.updateValue(value, forKey: String(kv[0])) == nil
            else { return nil }
        }
        return values
    }
}
