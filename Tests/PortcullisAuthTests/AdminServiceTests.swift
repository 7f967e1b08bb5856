import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// The admin services: admin keys and their scope, and the revocations admin
/// account changes carry, by the clock.
@Suite("Admin services")
struct AdminServiceTests {
    /// What a presented secret authenticates as, the way the admin authenticator looks it up.
    static func principal(_ harness: AuthHarness, secret: String) async throws -> AdminPrincipal? {
        guard let (keyId, hash) = AdminKeyCredential.parse(secret),
            let (key, stored) = try await harness.adminKeyRepository.findActive(keyId: keyId),
            SecretToken.constantTimeEquals(hash, stored)
        else { return nil }
        return AdminPrincipal(keyId: keyId, scope: key.scope)
    }

    @Test("a tenant key is stored with its tenant's scope and covers that tenant only; listing by tenant shows its keys only")
    func tenantKeyScope() async throws {
        try await AuthHarness.run { harness in
            let mine = try await harness.createTenant()
            let other = try await harness.createTenant()
            let (projectKey, projectSecret) = try await harness.adminKeys.create(displayName: "ops", scope: .project, actor: "test")
            let (tenantKey, tenantSecret) = try await harness.adminKeys.create(displayName: "mine", scope: .tenant(mine), actor: "test")
            _ = try await harness.adminKeys.create(displayName: "other", scope: .tenant(other), actor: "test")
            #expect(tenantKey.scope == .tenant(mine) && projectKey.scope == .project)

            let tenantPrincipal = try #require(try await Self.principal(harness, secret: tenantSecret))
            #expect(tenantPrincipal.scope == .tenant(mine))
            #expect(throws: Never.self) { try tenantPrincipal.authorize(.tenant(mine)) }
            for target in [AdminTarget.tenant(other), .project] {
                #expect(throws: AuthError(.permissionDenied)) { try tenantPrincipal.authorize(target) }
            }
            let projectPrincipal = try #require(try await Self.principal(harness, secret: projectSecret))
            #expect(throws: Never.self) { try projectPrincipal.authorize(.tenant(other)) }
            // A secret with one character changed authenticates as nothing.
            let forged = String(tenantSecret.dropLast()) + (tenantSecret.last == "A" ? "B" : "A")
            #expect(try await Self.principal(harness, secret: forged) == nil)

            #expect(try await harness.adminKeys.list(ofTenant: mine).map(\.keyId) == [tenantKey.keyId])
            #expect(try await harness.adminKeys.list(ofTenant: nil).count == 3)
        }
    }

    @Test("an admin key's creation and use are recorded at the injected clock's time, use at most once a minute")
    func keyTimesFollowTheClock() async throws {
        try await AuthHarness.run { harness in
            // A clock a day behind the database's: only the injected one may show.
            harness.clock.set(harness.clock.now().adding(seconds: -86_400))
            let created = harness.clock.now().date
            let (key, _) = try await harness.adminKeys.create(displayName: "ops", scope: .project, actor: "test")
            #expect(key.createTime == created)
            #expect(try await harness.adminKeys.list(ofTenant: nil).first?.createTime == created)

            harness.clock.advance(seconds: 5)
            try await harness.adminKeys.recordUse(of: key)
            let used = try #require(try await harness.adminKeys.list(ofTenant: nil).first)
            #expect(used.lastUsedTime == harness.clock.now().date)
            // Within the minute a use is not written again; after it, it is.
            harness.clock.advance(seconds: 30)
            try await harness.adminKeys.recordUse(of: used)
            #expect(try await harness.adminKeys.list(ofTenant: nil).first?.lastUsedTime == used.lastUsedTime)
            harness.clock.advance(seconds: 31)
            try await harness.adminKeys.recordUse(of: used)
            #expect(try await harness.adminKeys.list(ofTenant: nil).first?.lastUsedTime == harness.clock.now().date)
        }
    }

    @Test("a key for a missing or malformed tenant is TENANT_NOT_FOUND; revoking ends a key at once, once")
    func createAndRevoke() async throws {
        try await AuthHarness.run { harness in
            for tenant in ["no-such-tenant", "Not A Tenant!"] {
                let outcome = try await race(1) { _ in
                    try await harness.adminKeys.create(displayName: "k", scope: .tenant(tenant), actor: "test").secret
                }
                #expect(outcome[0].code == .tenantNotFound, "\(tenant)")
            }
            for name in ["", String(repeating: "n", count: 257)] {
                let error = await #expect(throws: AuthError.self) {
                    try await harness.adminKeys.create(displayName: name, scope: .project, actor: "test")
                }
                #expect(error?.code == .invalidArgument)
            }
            let tenant = try await harness.createTenant()
            let (key, secret) = try await harness.adminKeys.create(displayName: "k", scope: .tenant(tenant), actor: "test")
            try await harness.adminKeys.revoke(keyId: key.keyId, actor: "test")
            #expect(try await Self.principal(harness, secret: secret) == nil)
            await #expect(throws: AuthError(.adminKeyNotFound)) { try await harness.adminKeys.revoke(keyId: key.keyId, actor: "test") }
            #expect(try await harness.adminKeys.list(ofTenant: tenant).isEmpty)

            // Deleting a tenant takes its keys with it.
            let (survivor, survivorSecret) = try await harness.adminKeys.create(
                displayName: "k2", scope: .tenant(tenant), actor: "test")
            try await harness.tenantAdmin.delete(id: tenant, actor: "test")
            #expect(try await Self.principal(harness, secret: survivorSecret) == nil)
            await #expect(throws: AuthError(.adminKeyNotFound)) {
                try await harness.adminKeys.revoke(keyId: survivor.keyId, actor: "test")
            }
        }
    }

    @Test("an admin's validSince is taken as given; disabling revokes at the clock's time; enabling revokes nothing")
    func adminRevocations() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let start = harness.clock.now()
            let first = try await harness.signUp("admin@example.com", tenant: tenant)
            harness.clock.advance(seconds: 10)
            let second = try await harness.signIn("admin@example.com", tenant: tenant)
            func update(disabled: Bool? = nil, validSince: Int64? = nil) async throws -> User {
                try await harness.adminAccounts.update(
                    tenant: TenantScope(tenant), uid: first.user.uid, .init(disabled: disabled, validSince: validSince), actor: "test")
            }
            // A watermark between the two sign-ins ends the first session only.
            let revoked = try await update(validSince: start.seconds + 5)
            #expect(revoked.validSince == start.adding(seconds: 5))
            await #expect(throws: AuthError(.tokenExpired)) { try await harness.tokens.refresh(first.tokens.refreshToken) }
            await #expect(throws: AuthError(.tokenExpired)) {
                try await harness.accounts.lookup(idToken: first.tokens.idToken, tenantId: tenant)
            }
            let (current, _) = try await harness.tokens.refresh(second.tokens.refreshToken)

            harness.clock.advance(seconds: 10)
            let disabled = try await update(disabled: true)
            #expect(disabled.disabled && disabled.validSince >= harness.clock.now())
            await #expect(throws: AuthError(.tokenExpired)) { try await harness.tokens.refresh(current.refreshToken) }
            await #expect(throws: AuthError(.userDisabled)) { try await harness.signIn("admin@example.com", tenant: tenant) }

            harness.clock.advance(seconds: 10)
            let enabled = try await update(disabled: false)
            #expect(!enabled.disabled && enabled.validSince == disabled.validSince)
            let again = try await harness.signIn("admin@example.com", tenant: tenant)
            _ = try await harness.tokens.refresh(again.tokens.refreshToken)
            // A watermark may also move back: the admin's value is taken as given.
            let rewound = try await update(validSince: start.seconds)
            #expect(rewound.validSince == start)
            _ = try await harness.tokens.refresh(first.tokens.refreshToken)
        }
    }
}
