import Crypto
import CryptoExtras
import JWTKit
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import Testing

/// The libcrypto RS256 signer against an independent peer: jwt-kit over swift-crypto
/// (BoringSSL), which reads the same keys and JWKs.
@Suite("RS256 on OpenSSL's libcrypto")
struct RSASignerTests {
    /// The only claim these tokens carry.
    struct Subject: JWTPayload, Equatable {
        let sub: SubjectClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A compact JWS of `{"sub": subject}` signed by `signer` under `kid`.
    static func token(_ subject: String, kid: String, signer: RSASigner) throws -> String {
        let header = JSONValue.object(["alg": "RS256", "kid": .string(kid), "typ": "JWT"])
        let payload = JSONValue.object(["sub": .string(subject)])
        let input = Base64URL.encode(header.serializedBytes()) + "." + Base64URL.encode(payload.serializedBytes())
        return input + "." + Base64URL.encode(try signer.sign(Array(input.utf8)))
    }

    /// The signing input and signature of a compact JWS.
    static func split(_ token: String) throws -> (input: [UInt8], signature: [UInt8]) {
        let parts = token.split(separator: ".")
        try #require(parts.count == 3)
        return (Array("\(parts[0]).\(parts[1])".utf8), try #require(Base64URL.decode(String(parts[2]))))
    }

    @Test("its tokens verify with jwt-kit from the public JWK alone, and equal swift-crypto's signatures byte for byte")
    func verifiedByPeer() async throws {
        let key = try SigningKey.generate(.rs256)
        let signer = try RSASigner(pem: key.privateMaterial)
        let token = try Self.token("alice", kid: key.kid, signer: signer)
        let peer = try await JWTKeyCollection().add(jwksJSON: JSONValue.object(["keys": .array([key.publicJWK])]).serialized())
        #expect(try await peer.verify(token, as: Subject.self) == Subject(sub: "alice"))
        // PKCS#1 v1.5 is deterministic: both libraries must produce the very same bytes.
        let (input, signature) = try Self.split(token)
        let boring = try _RSA.Signing.PrivateKey(pemRepresentation: key.privateMaterial)
        let expected = try boring.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        #expect(signature == Array(expected.rawRepresentation))
    }

    @Test("it verifies tokens jwt-kit signed with the same key")
    func verifiesPeer() async throws {
        let key = try SigningKey.generate(.rs256)
        let peer = JWTKeyCollection()
        await peer.add(
            rsa: try Insecure.RSA.PrivateKey(pem: key.privateMaterial), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.kid))
        let token = try await peer.sign(Subject(sub: "bob"), kid: JWKIdentifier(string: key.kid))
        let (input, signature) = try Self.split(token)
        #expect(try RSASigner(pem: key.privateMaterial).verify(signature, signs: input))
        let keyring = try await Keyring(active: key, keys: [key])
        #expect(try keyring.verify(token) == .object(["sub": "bob"]))
    }

    @Test("a changed signature, input or key does not verify")
    func refusals() throws {
        let key = try SigningKey.generate(.rs256)
        let signer = try RSASigner(pem: key.privateMaterial)
        let input = Array("header.payload".utf8)
        let signature = try signer.sign(input)
        #expect(signature.count == 256)
        #expect(signer.verify(signature, signs: input))
        for index in [0, 1, 128, 255] {
            var flipped = signature
            flipped[index] ^= 0x01
            #expect(!signer.verify(flipped, signs: input), "byte \(index) flipped")
        }
        #expect(!signer.verify(Array(signature.dropLast()), signs: input))
        #expect(!signer.verify([], signs: input))
        #expect(!signer.verify(signature, signs: Array("header.payloaD".utf8)))
        let other = try RSASigner(pem: SigningKey.generate(.rs256).privateMaterial)
        #expect(!other.verify(signature, signs: input))
        // A refusal leaves nothing behind that breaks the next signature.
        #expect(signer.verify(try signer.sign(input), signs: input))
    }

    @Test("keys that are not RSA of at least 2048 bits are refused")
    func invalidKeys() throws {
        #expect(throws: SigningFailure.invalidKey) { try RSASigner(pem: "not a key") }
        #expect(throws: SigningFailure.invalidKey) { try RSASigner(pem: SigningKey.generate(.es256).privateMaterial) }
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        #expect(throws: SigningFailure.invalidKey) { try RSASigner(pem: small.pemRepresentation) }
        // swift-crypto's PKCS#1 PEM, the form RS256 keys were stored in before libcrypto made them, still loads.
        let older = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let signer = try RSASigner(pem: older.pemRepresentation)
        let input = Array("older".utf8)
        let signature = try _RSA.Signing.RSASignature(rawRepresentation: signer.sign(input))
        #expect(older.publicKey.isValidSignature(signature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5))
    }

    @Test("one signer signs and verifies from many tasks at once")
    func concurrentSigning() async throws {
        let key = try SigningKey.generate(.rs256)
        let signer = try RSASigner(pem: key.privateMaterial)
        let peer = try _RSA.Signing.PrivateKey(pemRepresentation: key.privateMaterial).publicKey
        let results = await withTaskGroup(of: (input: [UInt8], signature: [UInt8]?).self) { group in
            for task in 0..<64 {
                group.addTask {
                    let input = Array("token \(task)".utf8)
                    let signature = try? signer.sign(input)
                    return (input, signature.flatMap { signer.verify($0, signs: input) ? $0 : nil })
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 64)
        for (input, signature) in results {
            let signature = try #require(signature)
            let peerSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            #expect(peer.isValidSignature(peerSignature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5))
        }
    }
}
