import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// The recent-login rule (DESIGN.md §1): a password change, an email change and
/// self-deletion need a sign-in within the tenant's window, judged by the clock
/// against the presented token's own `auth_time`.
@Suite("Recent login")
struct RecentLoginTests {
    typealias Changes = AccountService.Changes

    @Test(
        "credential changes and self-deletion pass at the window's last second and are refused one second later",
        arguments: [nil, 60, 3600])
    func window(seconds: Int?) async throws {
        try await AuthHarness.run { harness in
            // ID tokens live a day here, so the window alone decides.
            let setting = seconds.map { #","recentLoginWindowSeconds":\#($0)"# } ?? ""
            let tenant = try await harness.createTenant(
                #"{"displayName":"w","allowPasswordSignup":true,"idTokenLifetimeSeconds":86400"# + setting + "}")
            let window = Int64(seconds ?? 300)
            let session = try await harness.signUp("recent@example.com", tenant: tenant)

            // At the window's last second the password change goes through and returns a new session …
            harness.clock.advance(seconds: window)
            let (_, changed) = try await harness.accounts.update(
                idToken: session.tokens.idToken, tenantId: tenant, changes: Changes(password: "second secret"))
            guard let renewed = changed else { throw TestSetupError("a password change returned no tokens") }
            let renewedClaims = try await harness.tokens.verifyIDToken(renewed.idToken)
            #expect(renewedClaims.authTime == harness.clock.now().seconds, "the new session starts at the change")

            // … whose own window then runs from the change.
            harness.clock.advance(seconds: window + 1)
            let tooOld: [(String, Changes)] = [
                ("password", Changes(password: "third secret")), ("email", Changes(email: "moved@example.com")),
            ]
            for (what, changes) in tooOld {
                let error = await #expect(throws: AuthError.self, "\(what)") {
                    _ = try await harness.accounts.update(idToken: renewed.idToken, tenantId: tenant, changes: changes)
                }
                #expect(error?.code == .credentialTooOldLoginAgain, "\(what)")
            }
            let deletion = await #expect(throws: AuthError.self) {
                try await harness.accounts.deleteSelf(idToken: renewed.idToken, tenantId: tenant)
            }
            #expect(deletion?.code == .credentialTooOldLoginAgain)
            // A profile edit needs no recent sign-in, and the refused changes changed nothing.
            let (profiled, none) = try await harness.accounts.update(
                idToken: renewed.idToken, tenantId: tenant, changes: Changes(profile: .init(displayName: "Still Me")))
            #expect(none == nil && profiled.displayName == "Still Me" && profiled.email == "recent@example.com")

            // Signing in again restores the right.
            let again = try await harness.signIn("recent@example.com", "second secret", tenant: tenant)
            try await harness.accounts.deleteSelf(idToken: again.tokens.idToken, tenantId: tenant)
            #expect(try await harness.users.find(tenant: TenantScope(tenant), uid: session.user.uid) == nil)
        }
    }

    @Test("a credential change revokes the sessions before it: the old refresh and ID tokens answer TOKEN_EXPIRED")
    func changeRevokesEarlierSessions() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let first = try await harness.signUp("rev@example.com", tenant: tenant)
            harness.clock.advance(seconds: 5)
            let second = try await harness.signIn("rev@example.com", tenant: tenant)
            harness.clock.advance(seconds: 5)
            let (_, renewed) = try await harness.accounts.update(
                idToken: second.tokens.idToken, tenantId: tenant, changes: Changes(email: "new@example.com"))
            for old in [first, second] {
                let refresh = await #expect(throws: AuthError.self) { try await harness.tokens.refresh(old.tokens.refreshToken) }
                #expect(refresh?.code == .tokenExpired)
                let lookup = await #expect(throws: AuthError.self) {
                    try await harness.accounts.lookup(idToken: old.tokens.idToken, tenantId: tenant)
                }
                #expect(lookup?.code == .tokenExpired)
            }
            let fresh = try #require(renewed)
            #expect(try await harness.accounts.lookup(idToken: fresh.idToken, tenantId: tenant).email == "new@example.com")
            #expect(try await harness.tokens.refresh(fresh.refreshToken).user.email == "new@example.com")
            // The password now goes with the new address only.
            _ = try await harness.signIn("new@example.com", tenant: tenant)
            let oldAddress = await #expect(throws: AuthError.self) { try await harness.signIn("rev@example.com", tenant: tenant) }
            #expect(oldAddress?.code == .emailNotFound)
        }
    }

    @Test("an anonymous account is exempt: it is upgraded days after its sign-in, and the upgraded account is not")
    func anonymousUpgradeIsExempt() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant(
                #"{"displayName":"anon","allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            let guest = try await harness.accounts.signUp(
                tenantId: tenant, email: nil, password: nil, profile: .init(), idToken: nil, client: nil)
            #expect(guest.user.isAnonymous)
            // Days later the app refreshes its ID token (auth_time stays the guest's sign-in) and upgrades.
            harness.clock.advance(seconds: 3 * 86_400)
            let (refreshed, _) = try await harness.tokens.refresh(guest.tokens.refreshToken)
            #expect(try await harness.tokens.verifyIDToken(refreshed.idToken).authTime == guest.user.lastLoginAt?.seconds)
            let upgraded = try await harness.accounts.signUp(
                tenantId: tenant, email: "guest@example.com", password: "correct horse", profile: .init(),
                idToken: refreshed.idToken, client: nil)
            #expect(upgraded.user.uid == guest.user.uid && !upgraded.user.isAnonymous)

            harness.clock.advance(seconds: 301)
            let error = await #expect(throws: AuthError.self) {
                _ = try await harness.accounts.update(
                    idToken: upgraded.tokens.idToken, tenantId: tenant, changes: Changes(password: "another one"))
            }
            #expect(error?.code == .credentialTooOldLoginAgain)
        }
    }
}
