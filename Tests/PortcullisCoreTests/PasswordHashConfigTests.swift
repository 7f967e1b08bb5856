import PortcullisCore
import Testing

@Suite("Imported password hash configurations")
struct PasswordHashConfigTests {
    static let key64 = [UInt8](repeating: 7, count: 64)

    /// One UploadAccount request's hash fields and what Portcullis makes of them.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var algorithm: String?
        var signerKey: [UInt8]?
        var saltSeparator: [UInt8]?
        var rounds: Int?
        var memoryCost: Int?
        var cpuMemCost: Int?
        var blockSize: Int?
        var parallelization: Int?
        var dkLen: Int?
        var order: String?
        /// The configuration, or the code it is refused with.
        let expected: Result<PasswordHashConfig, CodeOnly>
        var testDescription: String { name }

        func make() throws(AuthError) -> PasswordHashConfig {
            try PasswordHashConfig(
                hashAlgorithm: algorithm, signerKey: signerKey, saltSeparator: saltSeparator, rounds: rounds,
                memoryCost: memoryCost, cpuMemCost: cpuMemCost, blockSize: blockSize, parallelization: parallelization,
                dkLen: dkLen, passwordHashOrder: order)
        }
    }

    struct CodeOnly: Error, Equatable { let code: AuthError.Code }

    static func refused(_ code: AuthError.Code) -> Result<PasswordHashConfig, CodeOnly> { .failure(CodeOnly(code: code)) }

    @Test(
        "decisions",
        arguments: [
            Case(name: "no algorithm", expected: refused(.missingHashAlgorithm)),
            Case(name: "empty algorithm", algorithm: "", expected: refused(.missingHashAlgorithm)),
            Case(name: "unknown algorithm", algorithm: "ROT13", expected: refused(.invalidHashAlgorithm)),
            Case(name: "lower-case name", algorithm: "bcrypt", expected: refused(.invalidHashAlgorithm)),
            Case(name: "Identity Toolkit's MD5, not verified here", algorithm: "MD5", rounds: 1, expected: refused(.invalidHashAlgorithm)),
            Case(name: "HMAC_SHA1, not verified here", algorithm: "HMAC_SHA1", signerKey: [1], expected: refused(.invalidHashAlgorithm)),

            // Firebase's scrypt: the console's parameters, and Firebase's own limits.
            Case(
                name: "SCRYPT as the console shows it", algorithm: "SCRYPT", signerKey: key64, saltSeparator: [7], rounds: 8,
                memoryCost: 14,
                expected: .success(.firebaseScrypt(signerKey: key64, saltSeparator: [7], rounds: 8, memoryCost: 14))),
            Case(
                name: "SCRYPT without a salt separator", algorithm: "SCRYPT", signerKey: key64, rounds: 1, memoryCost: 1,
                expected: .success(.firebaseScrypt(signerKey: key64, saltSeparator: [], rounds: 1, memoryCost: 1))),
            Case(
                name: "SCRYPT ignores STANDARD_SCRYPT's fields", algorithm: "SCRYPT", signerKey: key64, rounds: 8, memoryCost: 14,
                cpuMemCost: 1 << 30, dkLen: 1,
                expected: .success(.firebaseScrypt(signerKey: key64, saltSeparator: [], rounds: 8, memoryCost: 14))),
            Case(name: "SCRYPT without a signer key", algorithm: "SCRYPT", rounds: 8, memoryCost: 14, expected: refused(.invalidHashKey)),
            Case(
                name: "SCRYPT with a 15-byte signer key", algorithm: "SCRYPT", signerKey: Array(key64.prefix(15)), rounds: 8,
                memoryCost: 14, expected: refused(.invalidHashKey)),
            Case(
                name: "SCRYPT with a 16-byte signer key", algorithm: "SCRYPT", signerKey: Array(key64.prefix(16)), rounds: 8,
                memoryCost: 14,
                expected: .success(.firebaseScrypt(signerKey: Array(key64.prefix(16)), saltSeparator: [], rounds: 8, memoryCost: 14))),
            Case(
                name: "SCRYPT with a 1025-byte signer key", algorithm: "SCRYPT", signerKey: [UInt8](repeating: 1, count: 1025), rounds: 8,
                memoryCost: 14, expected: refused(.invalidHashKey)),
            Case(
                name: "SCRYPT with a 1025-byte salt separator", algorithm: "SCRYPT", signerKey: key64,
                saltSeparator: [UInt8](repeating: 1, count: 1025), rounds: 8, memoryCost: 14, expected: refused(.invalidHashSaltSeparator)),
            Case(
                name: "SCRYPT without rounds", algorithm: "SCRYPT", signerKey: key64, memoryCost: 14, expected: refused(.invalidHashRounds)),
            Case(
                name: "SCRYPT rounds 0", algorithm: "SCRYPT", signerKey: key64, rounds: 0, memoryCost: 14,
                expected: refused(.invalidHashRounds)),
            Case(
                name: "SCRYPT rounds 9", algorithm: "SCRYPT", signerKey: key64, rounds: 9, memoryCost: 14,
                expected: refused(.invalidHashRounds)),
            Case(
                name: "SCRYPT without memoryCost", algorithm: "SCRYPT", signerKey: key64, rounds: 8,
                expected: refused(.invalidHashMemoryCost)),
            Case(
                name: "SCRYPT memoryCost 0", algorithm: "SCRYPT", signerKey: key64, rounds: 8, memoryCost: 0,
                expected: refused(.invalidHashMemoryCost)),
            Case(
                name: "SCRYPT memoryCost 15", algorithm: "SCRYPT", signerKey: key64, rounds: 8, memoryCost: 15,
                expected: refused(.invalidHashMemoryCost)),

            // Standard scrypt: N a power of two; the daemon's own work and memory bounds.
            Case(
                name: "STANDARD_SCRYPT of firebase-admin's test", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 8,
                parallelization: 16, dkLen: 64,
                expected: .success(.standardScrypt(cpuMemCost: 1024, blockSize: 8, parallelization: 16, dkLen: 64))),
            Case(
                name: "STANDARD_SCRYPT at 16 × the default work", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1 << 16, blockSize: 8,
                parallelization: 4, dkLen: 32,
                expected: .success(.standardScrypt(cpuMemCost: 1 << 16, blockSize: 8, parallelization: 4, dkLen: 32))),
            Case(
                name: "STANDARD_SCRYPT above 16 × the default work", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1 << 16, blockSize: 8,
                parallelization: 5, dkLen: 32, expected: refused(.invalidHashParameter)),
            Case(
                name: "STANDARD_SCRYPT above 64 MiB", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1 << 17, blockSize: 8,
                parallelization: 1, dkLen: 32, expected: refused(.invalidHashParameter)),
            Case(
                name: "STANDARD_SCRYPT N not a power of two", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1000, blockSize: 8,
                parallelization: 1, dkLen: 32, expected: refused(.invalidHashMemoryCost)),
            Case(
                name: "STANDARD_SCRYPT N = 1", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1, blockSize: 8, parallelization: 1, dkLen: 32,
                expected: refused(.invalidHashMemoryCost)),
            Case(
                name: "STANDARD_SCRYPT N negative", algorithm: "STANDARD_SCRYPT", cpuMemCost: -1024, blockSize: 8, parallelization: 1,
                dkLen: 32, expected: refused(.invalidHashMemoryCost)),
            Case(
                name: "STANDARD_SCRYPT N given as Firebase's log2 (memoryCost)", algorithm: "STANDARD_SCRYPT", memoryCost: 14,
                blockSize: 8, parallelization: 1, dkLen: 32, expected: refused(.invalidHashMemoryCost)),
            Case(
                name: "STANDARD_SCRYPT without blockSize", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, parallelization: 1, dkLen: 32,
                expected: refused(.invalidHashBlockSize)),
            Case(
                name: "STANDARD_SCRYPT blockSize 0", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 0, parallelization: 1,
                dkLen: 32, expected: refused(.invalidHashBlockSize)),
            Case(
                name: "STANDARD_SCRYPT blockSize 33", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 33, parallelization: 1,
                dkLen: 32, expected: refused(.invalidHashBlockSize)),
            Case(
                name: "STANDARD_SCRYPT without parallelization", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 8, dkLen: 32,
                expected: refused(.invalidHashParallelization)),
            Case(
                name: "STANDARD_SCRYPT parallelization 17", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 8,
                parallelization: 17, dkLen: 32, expected: refused(.invalidHashParallelization)),
            Case(
                name: "STANDARD_SCRYPT without dkLen", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 8, parallelization: 1,
                expected: refused(.invalidHashDerivedKeyLength)),
            Case(
                name: "STANDARD_SCRYPT dkLen 15", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 8, parallelization: 1,
                dkLen: 15, expected: refused(.invalidHashDerivedKeyLength)),
            Case(
                name: "STANDARD_SCRYPT dkLen 16", algorithm: "STANDARD_SCRYPT", cpuMemCost: 1024, blockSize: 8, parallelization: 1,
                dkLen: 16, expected: .success(.standardScrypt(cpuMemCost: 1024, blockSize: 8, parallelization: 1, dkLen: 16))),

            Case(name: "BCRYPT needs nothing", algorithm: "BCRYPT", expected: .success(.bcrypt)),
            Case(name: "BCRYPT ignores rounds", algorithm: "BCRYPT", rounds: 1_000_000, expected: .success(.bcrypt)),

            Case(name: "PBKDF2_SHA256", algorithm: "PBKDF2_SHA256", rounds: 100_000, expected: .success(.pbkdf2SHA256(rounds: 100_000))),
            Case(
                name: "PBKDF2_SHA256 at Firebase's limit", algorithm: "PBKDF2_SHA256", rounds: 120_000,
                expected: .success(.pbkdf2SHA256(rounds: 120_000))),
            Case(name: "PBKDF2_SHA256 above it", algorithm: "PBKDF2_SHA256", rounds: 120_001, expected: refused(.invalidHashRounds)),
            Case(name: "PBKDF2_SHA256 0 rounds", algorithm: "PBKDF2_SHA256", rounds: 0, expected: refused(.invalidHashRounds)),
            Case(name: "PBKDF2_SHA256 without rounds", algorithm: "PBKDF2_SHA256", expected: refused(.invalidHashRounds)),

            Case(
                name: "HMAC_SHA256 without an order: password then salt", algorithm: "HMAC_SHA256", signerKey: [1, 2, 3],
                expected: .success(.hmacSHA256(key: [1, 2, 3], order: .passwordAndSalt))),
            Case(
                name: "HMAC_SHA256 UNSPECIFIED_ORDER", algorithm: "HMAC_SHA256", signerKey: [1], order: "UNSPECIFIED_ORDER",
                expected: .success(.hmacSHA256(key: [1], order: .passwordAndSalt))),
            Case(
                name: "HMAC_SHA256 SALT_AND_PASSWORD", algorithm: "HMAC_SHA256", signerKey: [1], order: "SALT_AND_PASSWORD",
                expected: .success(.hmacSHA256(key: [1], order: .saltAndPassword))),
            Case(
                name: "HMAC_SHA256 an unknown order", algorithm: "HMAC_SHA256", signerKey: [1], order: "SALT_FIRST",
                expected: refused(.invalidArgument)),
            Case(name: "HMAC_SHA256 without a key", algorithm: "HMAC_SHA256", expected: refused(.invalidHashKey)),
            Case(name: "HMAC_SHA256 with an empty key", algorithm: "HMAC_SHA256", signerKey: [], expected: refused(.invalidHashKey)),
        ])
    func decisions(_ test: Case) {
        switch (Result { () throws(AuthError) in try test.make() }, test.expected) {
        case (.success(let made), .success(let expected)):
            #expect(made == expected)
            #expect(made.algorithm.rawValue == test.algorithm)
        case (.failure(let error), .failure(let expected)):
            #expect(error.code == expected.code, "\(error)")
            #expect(error.httpStatus == 400)
        case (let made, let expected):
            Issue.record("made \(made), expected \(expected)")
        }
    }

    @Test("a configuration built from its cases is bounded too")
    func validatedCases() throws {
        #expect(throws: AuthError(.invalidHashRounds, detail: "rounds: 1 to 120000")) {
            try PasswordHashConfig.pbkdf2SHA256(rounds: 10_000_000).validated()
        }
        #expect(throws: AuthError.self) {
            try PasswordHashConfig.firebaseScrypt(signerKey: Self.key64, saltSeparator: [], rounds: 8, memoryCost: 20).validated()
        }
        #expect(throws: AuthError.self) { try PasswordHashConfig.hmacSHA256(key: [], order: .passwordAndSalt).validated() }
        #expect(try PasswordHashConfig.bcrypt.validated() == .bcrypt)
    }
}
