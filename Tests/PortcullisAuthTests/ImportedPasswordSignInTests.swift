import Foundation
import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth

/// A user whose stored hash is an imported one signs in through `AccountService` as it is,
/// and the first successful sign-in replaces the hash with the tenant's scrypt.
@Suite("Imported password sign-in")
struct ImportedPasswordSignInTests {
    /// firebase/scrypt's README sample: a real Firebase project's parameters and one user.
    static func firebaseHash() throws -> String {
        func bytes(_ base64: String) throws -> [UInt8] {
            guard let data = Data(base64Encoded: base64) else { throw TestSetupError("not base64") }
            return Array(data)
        }
        let config = try PasswordHashConfig(
            hashAlgorithm: "SCRYPT",
            signerKey: try bytes("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="),
            saltSeparator: try bytes("Bw=="), rounds: 8, memoryCost: 14)
        return try StoredPasswordHash.imported(
            config: config,
            passwordHash: try bytes("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="),
            salt: try bytes("42xEC+ixf3L2lw=="))
    }

    @Test("a Firebase scrypt hash signs in, a wrong password does not, and the first sign-in rehashes it")
    func firebaseScryptSignIn() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let user = try await harness.signUp("user1@test.com", "user1password", tenant: tenant).user
            // As an import would store it (the import endpoint comes later).
            let imported = try Self.firebaseHash()
            try await harness.database.pool().client.query(
                "UPDATE users SET password_hash = \(imported) WHERE tenant_id = \(tenant) AND uid = \(user.uid)")
            await #expect(throws: AuthError(.invalidPassword)) {
                try await harness.signIn("user1@test.com", "user1Password", tenant: tenant)
            }
            #expect(try await harness.users.find(tenant: TenantScope(tenant), uid: user.uid)?.passwordHash == imported)

            let signedIn = try await harness.signIn("user1@test.com", "user1password", tenant: tenant)
            #expect(signedIn.user.uid == user.uid)
            let rehashed = try await harness.users.find(tenant: TenantScope(tenant), uid: user.uid)?.passwordHash
            #expect(rehashed?.hasPrefix("$scrypt$ln=10,r=8,p=1$") == true, "\(rehashed ?? "no hash")")
            // The rehash is the same password, and is kept from now on.
            _ = try await harness.signIn("user1@test.com", "user1password", tenant: tenant)
            #expect(try await harness.users.find(tenant: TenantScope(tenant), uid: user.uid)?.passwordHash == rehashed)
            await #expect(throws: AuthError(.invalidPassword)) {
                try await harness.signIn("user1@test.com", "user1Password", tenant: tenant)
            }
        }
    }
}
