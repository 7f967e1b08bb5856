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
        #expect(try await service.verify(vector.password, against: stored, settings: settings, tenant: .project))
        #expect(try await !service.verify(vector.password + "x", against: stored, settings: settings, tenant: .project))
        #expect(service.hasher(for: settings).needsRehash(stored))
        let rehashed = try await service.hash(vector.password, settings: settings, tenant: .project)
        #expect(rehashed.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(!service.hasher(for: settings).needsRehash(rehashed))
        #expect(try await service.verify(vector.password, against: rehashed, settings: settings, tenant: .project))
        // An unknown account still costs a dummy verification and answers false.
        #expect(try await !service.verify(vector.password, against: nil, settings: settings, tenant: .project))
    }
}
