import Foundation
import PortcullisCore
import Testing

@testable import PortcullisCrypto

/// Imported password hashes against an independent implementation: Tests/interop/make_password_hashes.py
/// makes fresh vectors with Python's hashlib, hmac, cryptography and bcrypt on every run.
@Suite("Imported password hashes")
struct ImportedPasswordHashTests {
    /// The native hasher a tenant would rehash to (cheap: the tests are about formats).
    static let hasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))

    /// One vector: UploadAccount hash fields (bytes in standard base64) and one user.
    struct Vector: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let hashAlgorithm: String
        let signerKey: String?
        let saltSeparator: String?
        let rounds: Int?
        let memoryCost: Int?
        let cpuMemCost: Int?
        let blockSize: Int?
        let parallelization: Int?
        let dkLen: Int?
        let passwordHashOrder: String?
        let password: String
        let salt: String
        let passwordHash: String
        var testDescription: String { name }

        func config() throws -> PasswordHashConfig {
            try PasswordHashConfig(
                hashAlgorithm: hashAlgorithm, signerKey: try signerKey.map(ImportedPasswordHashTests.bytes),
                saltSeparator: try saltSeparator.map(ImportedPasswordHashTests.bytes),
                rounds: rounds, memoryCost: memoryCost, cpuMemCost: cpuMemCost, blockSize: blockSize, parallelization: parallelization,
                dkLen: dkLen, passwordHashOrder: passwordHashOrder)
        }

        func stored() throws -> String {
            try StoredPasswordHash.imported(
                config: config(), passwordHash: ImportedPasswordHashTests.bytes(passwordHash), salt: ImportedPasswordHashTests.bytes(salt))
        }
    }

    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    static func bytes(_ base64: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: base64) else { throw SetupError(description: "not base64: \(base64)") }
        return Array(data)
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs the Python script once per test process. Without `PORTCULLIS_TEST_PYTHON` the tests
    /// fail: scripts/test always provides it, and a skipped interop check proves nothing.
    static let vectors: Result<[Vector], SetupError> = {
        guard let python = ProcessInfo.processInfo.environment["PORTCULLIS_TEST_PYTHON"],
            FileManager.default.isExecutableFile(atPath: python)
        else {
            return .failure(
                SetupError(description: "PORTCULLIS_TEST_PYTHON is not set: run the tests with scripts/test, which installs it"))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [packageRoot.appendingPathComponent("Tests/interop/make_password_hashes.py").path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            let message = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                return .failure(SetupError(description: "make_password_hashes.py: \(String(decoding: message, as: UTF8.self))"))
            }
            return .success(try JSONDecoder().decode([Vector].self, from: data))
        } catch {
            return .failure(SetupError(description: "make_password_hashes.py: \(error)"))
        }
    }()

    static func vector(_ name: String) throws -> Vector {
        let all = try vectors.get()
        guard let found = all.first(where: { $0.name == name }) else { throw SetupError(description: "no vector \(name)") }
        return found
    }

    /// The names make_password_hashes.py prints (a test per vector; a missing one fails).
    static let names = [
        "SCRYPT at Firebase's own cost", "SCRYPT, cheap", "SCRYPT, one round, no separator", "SCRYPT, empty salt, long separator",
        "STANDARD_SCRYPT as firebase-admin's test", "STANDARD_SCRYPT, 16-byte key", "STANDARD_SCRYPT, r = 4, p = 2",
        "BCRYPT $2b$", "BCRYPT $2a$", "BCRYPT $2y$", "PBKDF2_SHA256, 64 bytes", "PBKDF2_SHA256, 32 bytes",
        "HMAC_SHA256, no order (password, salt)", "HMAC_SHA256, PASSWORD_AND_SALT", "HMAC_SHA256, SALT_AND_PASSWORD",
    ]

    @Test("the interop script makes exactly the vectors these tests name")
    func allVectorsNamed() throws {
        #expect(try Self.vectors.get().map(\.name).sorted() == Self.names.sorted())
    }

    @Test("Python's hash verifies with its password only, and is rehashed on sign-in", arguments: names)
    func verifies(name: String) throws {
        let vector = try Self.vector(name)
        let stored = try vector.stored()
        #expect(Self.hasher.verify(vector.password, against: stored), "\(stored)")
        #expect(!Self.hasher.verify(vector.password + "x", against: stored))
        #expect(!Self.hasher.verify(String(vector.password.dropLast()), against: stored))
        #expect(!Self.hasher.verify("", against: stored))
        #expect(Self.hasher.needsRehash(stored))
        #expect(PasswordHasher(parameters: .standard).needsRehash(stored))
        // The stored text reads back as what it was made of.
        #expect(StoredPasswordHash(parsing: stored)?.encoded == stored)
    }

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

    /// firebase/scrypt's README sample (and the one firebase-admin's integration test imports):
    /// a real project's parameters, at Firebase's cost.
    @Test(
        "Firebase's published scrypt vectors verify",
        arguments: [
            (
                "user1password", "42xEC+ixf3L2lw==",
                "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="
            ),
            ("password", "TmFDbA==", "V358E8LdWJXAO7muq0CufVpEOXaj8aFiC7T/rcaGieN04q/ZPJ08WhJEHGjj9lz/2TT+/86N5VjVoc5DdBhBiw=="),
        ])
    func publishedFirebaseVector(password: String, salt: String, hash: String) throws {
        let config = try PasswordHashConfig(
            hashAlgorithm: "SCRYPT",
            signerKey: try Self.bytes("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="),
            saltSeparator: try Self.bytes("Bw=="), rounds: 8, memoryCost: 14)
        let stored = try StoredPasswordHash.imported(config: config, passwordHash: try Self.bytes(hash), salt: try Self.bytes(salt))
        #expect(stored.hasPrefix("$firebase-scrypt$ln=14,r=8$"))
        #expect(Self.hasher.verify(password, against: stored))
        #expect(!Self.hasher.verify(password.uppercased(), against: stored))
    }

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
        let bcrypt = "$2b$15$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO"
        #expect(try StoredPasswordHash.imported(config: .bcrypt, passwordHash: Array(bcrypt.utf8), salt: []) == bcrypt)
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
            "$2b$16$abcdefghijklmnopqrstuu5Ej8ukRT3v1xp6jB3iFvQhjsPlFjmNO",  // bcrypt above cost 15
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

    @Test("bcrypt refuses a password with a NUL, which its C string would cut short")
    func bcryptNul() throws {
        let vector = try Self.vector("BCRYPT $2b$")
        let stored = try vector.stored()
        #expect(Self.hasher.verify(vector.password, against: stored))
        #expect(!Self.hasher.verify(vector.password + "\u{0}tail", against: stored))
    }

    @Test("sign-in's path: an imported hash verifies on the pool, asks to be rehashed, and its rehash is native")
    func rehashOnSignIn() async throws {
        let vector = try Self.vector("PBKDF2_SHA256, 64 bytes")
        let stored = try vector.stored()
        let service = PasswordHashingService(defaultParameters: .init(logN: 10, r: 8, p: 1), pool: HashingPool(threads: 1))
        let settings = TenantSettings()
        // What AccountService.signIn does: verify, then rehash when the hasher says so.
        #expect(try await service.verify(vector.password, against: stored, settings: settings))
        #expect(try await !service.verify(vector.password + "x", against: stored, settings: settings))
        #expect(service.hasher(for: settings).needsRehash(stored))
        let rehashed = try await service.hash(vector.password, settings: settings)
        #expect(rehashed.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(!service.hasher(for: settings).needsRehash(rehashed))
        #expect(try await service.verify(vector.password, against: rehashed, settings: settings))
        // An unknown account still costs a dummy verification and answers false.
        #expect(try await !service.verify(vector.password, against: nil, settings: settings))
    }
}
