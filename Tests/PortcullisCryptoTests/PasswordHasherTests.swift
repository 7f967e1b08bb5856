import PortcullisCore
import PortcullisJSON
import Testing

@testable import PortcullisCrypto

@Suite("Passwords and keys")
struct PasswordHasherTests {
    let hasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))

    @Test("scrypt hashes verify, carry their parameters, and differ per salt")
    func scrypt() throws {
        let hash = try hasher.hash("correct horse")
        #expect(hash.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(hasher.verify("correct horse", against: hash))
        #expect(!hasher.verify("correct horsE", against: hash))
        #expect(try hasher.hash("correct horse") != hash)
        #expect(!hasher.needsRehash(hash))
        #expect(PasswordHasher(parameters: .standard).needsRehash(hash))
        // Verification reads the stored parameters, not the hasher's.
        #expect(PasswordHasher(parameters: .standard).verify("correct horse", against: hash))
        // Another digest of the same length: its first character carries six bits of the first
        // byte. (A character appended instead made a 33-byte digest, a valid scrypt output of
        // another length whose last byte matched the password's one time in 256.)
        let digest = hash.split(separator: "$")[3]
        let altered = hash.dropLast(digest.count) + (digest.hasPrefix("A") ? "B" : "A") + digest.dropFirst()
        for broken in ["", "$scrypt$", "$bcrypt$ln=10,r=8,p=1$AAAA$BBBB", "$scrypt$ln=99,r=8,p=1$AAAA$BBBB", String(altered)] {
            #expect(!hasher.verify("correct horse", against: broken))
        }
    }

    @Test("a stored hash shorter than scrypt's output never verifies, even when its bytes match the password's prefix")
    func truncatedHashNeverVerifies() throws {
        let hash = try hasher.hash("correct horse")
        let fields = hash.split(separator: "$")
        guard fields.count == 4, let digest = Base64URL.decode(String(fields[3])) else { throw HashFormatError() }
        #expect(digest.count == 32)
        // The same salt and parameters with a digest cut to 1, 8 and 31 bytes: each is a true prefix of
        // the password's derived key, so only a length check refuses them.
        for length in [0, 1, 8, 31] {
            let truncated = "$\(fields[0])$\(fields[1])$\(fields[2])$\(Base64URL.encode(Array(digest.prefix(length))))"
            #expect(!hasher.verify("correct horse", against: truncated), "digest of \(length) bytes")
        }
    }

    @Test("the master key seals bound to a context, and reads operator formats")
    func masterKey() throws {
        let key = MasterKey.generate()
        let sealed = try key.seal(Array("private".utf8), context: "tenant-a:kid1")
        #expect(try key.open(sealed, context: "tenant-a:kid1") == Array("private".utf8))
        #expect(throws: MasterKey.Failure.cannotOpen) { try key.open(sealed, context: "tenant-b:kid1") }
        #expect(throws: MasterKey.Failure.cannotOpen) { try MasterKey.generate().open(sealed, context: "tenant-a:kid1") }
        let fromHex = try MasterKey(material: Array((key.hexString + "\n").utf8))
        #expect(try fromHex.open(sealed, context: "tenant-a:kid1") == Array("private".utf8))
        #expect(throws: MasterKey.Failure.invalidLength) { try MasterKey(material: Array("short".utf8)) }
    }

    @Test("a keyring publishes its next key at once and signs with it from its second on")
    func nextKey() async throws {
        let current = try SigningKey.generate(.rs256)
        let next = try SigningKey.generate(.es256)
        let keyring = try await Keyring(active: current, keys: [current], next: (next, signsFrom: 2_000))
        func kid(_ token: String) throws -> JSONValue? {
            try JSONValue.parse(Base64URL.decode(String(token.split(separator: ".")[0])) ?? []).value(at: ["kid"])
        }
        #expect(try kid(keyring.sign(.object(["sub": "u"]), now: 1_999)) == .string(current.kid))
        let switched = try keyring.sign(.object(["sub": "u"]), now: 2_000)
        #expect(try kid(switched) == .string(next.kid))
        #expect(try keyring.verify(switched) == .object(["sub": "u"]))
        guard case .array(let published)? = keyring.jwks.value(at: ["keys"]) else { throw HashFormatError() }
        #expect(Set(published.compactMap { $0.value(at: ["kid"]) }) == [.string(current.kid), .string(next.kid)])
    }

    @Test("keyrings sign with the active key and verify only their own keys", arguments: TenantSettings.SigningAlgorithm.allCases)
    func keyring(algorithm: TenantSettings.SigningAlgorithm) async throws {
        let first = try SigningKey.generate(algorithm)
        let second = try SigningKey.generate(algorithm)
        let keyring = try await Keyring(active: second, keys: [second, first])
        let token = try keyring.sign(.object(["sub": "u"]), now: 1_000)
        #expect(try keyring.verify(token) == .object(["sub": "u"]))
        let old = try await Keyring(active: first, keys: [first]).sign(.object(["sub": "old"]), now: 1_000)
        #expect(try keyring.verify(old) == .object(["sub": "old"]))
        let stranger = try await Keyring(active: SigningKey.generate(algorithm), keys: [])
        #expect(throws: Keyring.VerificationFailure.unknownKey) { try stranger.verify(token) }
        let parts = token.split(separator: ".")
        #expect(throws: Keyring.VerificationFailure.badSignature) {
            try keyring.verify("\(parts[0]).\(parts[1]).\(parts[2].dropLast(4))AAAA")
        }
        #expect(throws: Keyring.VerificationFailure.malformed) { try keyring.verify("a.b") }
        guard case .array(let published)? = keyring.jwks.value(at: ["keys"]) else { throw KeyringTestError.noKeys }
        #expect(published.count == 2)
        #expect(!keyring.jwks.serialized().contains(first.privateMaterial.prefix(40)))
    }

    enum KeyringTestError: Error { case noKeys }
}

struct HashFormatError: Error {}
