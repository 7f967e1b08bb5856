import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import Testing

@Suite("Secrets")
struct SecretTokenTests {
    @Test("admin key credentials parse back to their id and hash")
    func credential() throws {
        let credential = AdminKeyCredential.generate()
        #expect(credential.secret.hasPrefix("pcak_\(credential.keyId)_"))
        #expect(credential.secret.count >= 5 + 16 + 1 + 43)
        let parsed = try #require(AdminKeyCredential.parse(credential.secret))
        #expect(parsed.keyId == credential.keyId)
        #expect(parsed.secretHash == credential.secretHash)
        #expect(AdminKeyCredential.generate().keyId != credential.keyId)
    }

    @Test(
        "malformed admin keys are refused without a lookup",
        arguments: [
            "", "pcak_", "pcak_short_x", "bearer", "pcak_ABCDEFGHIJKLMNOP_x", "pcak_abcdefghijklmno'_x",
            "AIzaSyD-api-key", String(repeating: "pcak_abcdefghijklmnop_", count: 20),
        ])
    func malformed(secret: String) {
        #expect(AdminKeyCredential.parse(secret) == nil)
    }

    @Test("constant-time comparison is still a comparison")
    func compare() {
        #expect(SecretToken.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!SecretToken.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!SecretToken.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(SecretToken.hash("a") != SecretToken.hash("b"))
        #expect(SecretToken.hash("a").count == 32)
    }

    @Test("random secrets carry 256 bits and base64url round-trips")
    func random() {
        let secret = SecretToken.random()
        #expect(secret.count == 43)
        #expect(Base64URL.decode(secret)?.count == 32)
        #expect(SecretToken.random() != secret)
        #expect(Base64URL.decode("not base64!") == nil)
        // Lengths that are not a multiple of the eight bytes drawn at a time.
        for count in [1, 7, 9, 16, 31] {
            #expect(Base64URL.decode(SecretToken.random(byteCount: count))?.count == count)
        }
    }

    @Test("refresh tokens name their tenant and session, and successors are derived: same key, same successor")
    func refreshTokens() throws {
        let key = RefreshTokenKey(masterKey: MasterKey.generate())
        let first = RefreshToken.startSession(tenantId: "acme-1")
        #expect(first.string.hasPrefix("pr2."))
        let parsed = try #require(RefreshToken(parsing: first.string))
        #expect(parsed == first && parsed.tenantId == "acme-1" && parsed.secretHash == first.secretHash)
        #expect(RefreshToken(parsing: RefreshToken.startSession(tenantId: nil).string)?.tenantId == nil)

        let next = first.successor(using: key)
        #expect(next == first.successor(using: key))
        #expect(next.sessionId == first.sessionId && next.tenantId == first.tenantId && next.secretHash != first.secretHash)
        #expect(RefreshToken(parsing: next.string) == next)
        #expect(next.successor(using: key) != next)
        #expect(first.successor(using: RefreshTokenKey(masterKey: MasterKey.generate())) != next)

        let parts = first.string.split(separator: ".").map(String.init)
        for malformed in [
            "", "pr2", "pr1.\(parts[1]).\(parts[3])", "pr3.\(parts[1]).\(parts[2]).\(parts[3])",
            "pr2.\(parts[1]).\(parts[2]).\(parts[3]).x", "pr2.\(parts[1]).\(parts[2]).\(parts[3].dropLast())",
            "pr2.\(Base64URL.encode(Array("bad tenant!".utf8))).\(parts[2]).\(parts[3])",
            "pr2.\(parts[1]).\(parts[2].dropLast())*.\(parts[3])",
        ] {
            #expect(RefreshToken(parsing: malformed) == nil, "\(malformed)")
        }
    }
}
