import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// Sign-up, sign-in and refresh through `AccountService` and `TokenService` themselves:
/// the contracts routes rely on, without a router in between.
@Suite("Account service")
struct AccountServiceTests {
    @Test("sign-up, sign-in and refresh hand out tokens the token service verifies, stamped with the clock's time")
    func signUpSignInRefresh() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let start = harness.clock.now()
            let signedUp = try await harness.signUp("Ada@Example.com", tenant: tenant)
            #expect(signedUp.user.email == "ada@example.com")
            #expect(signedUp.user.lastLoginAt == start)
            let first = try await harness.tokens.verifyIDToken(signedUp.tokens.idToken)
            #expect(first.subject == signedUp.user.uid && first.tenantId == tenant)
            #expect(first.issuer == "http://localhost/\(AuthHarness.projectId)/tenants/\(tenant)")
            #expect(first.authTime == start.seconds && first.issuedAt == start.seconds)
            #expect(first.expiresAt == start.seconds + 3600 && signedUp.tokens.expiresIn == 3600)
            #expect(first.signInProvider == "password")

            harness.clock.advance(seconds: 90)
            let signedIn = try await harness.signIn("ADA@example.com", tenant: tenant)
            #expect(signedIn.user.uid == signedUp.user.uid)
            #expect(try await harness.tokens.verifyIDToken(signedIn.tokens.idToken).authTime == start.seconds + 90)
            #expect(
                try await harness.users.find(tenant: TenantScope(tenant), uid: signedUp.user.uid)?.user.lastLoginAt == harness.clock.now())

            // A refresh keeps the session's auth_time and rotates the refresh token.
            harness.clock.advance(seconds: 30)
            let (refreshed, user) = try await harness.tokens.refresh(signedIn.tokens.refreshToken)
            #expect(user.uid == signedUp.user.uid)
            #expect(refreshed.refreshToken != signedIn.tokens.refreshToken)
            let claims = try await harness.tokens.verifyIDToken(refreshed.idToken)
            #expect(claims.authTime == start.seconds + 90 && claims.issuedAt == start.seconds + 120)
            #expect(try await harness.accounts.lookup(idToken: refreshed.idToken, tenantId: tenant).uid == user.uid)
        }
    }

    @Test("a wrong password or unknown email is told apart, unless email privacy is on")
    func wrongCredentials() async throws {
        try await AuthHarness.run { harness in
            let open = try await harness.createTenant()
            let private_ = try await harness.createTenant(
                #"{"displayName":"p","allowPasswordSignup":true,"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}}"#)
            for tenant in [open, private_] {
                _ = try await harness.signUp("bob@example.com", tenant: tenant)
            }
            for (tenant, wrongPassword, unknownEmail) in [
                (open, AuthError.Code.invalidPassword, AuthError.Code.emailNotFound),
                (private_, .invalidLoginCredentials, .invalidLoginCredentials),
            ] {
                let wrong = await #expect(throws: AuthError.self) {
                    try await harness.signIn("bob@example.com", "not it", tenant: tenant)
                }
                #expect(wrong?.code == wrongPassword)
                let unknown = await #expect(throws: AuthError.self) {
                    try await harness.signIn("nobody@example.com", tenant: tenant)
                }
                #expect(unknown?.code == unknownEmail)
            }
            #expect(try await harness.accounts.signInMethods(tenant: TenantScope(open), email: "bob@example.com") == ["password"])
            #expect(try await harness.accounts.signInMethods(tenant: TenantScope(private_), email: "bob@example.com") == nil)
        }
    }

    @Test("with the self-service switches on, end users cannot sign up or delete themselves; the admin service still can")
    func selfServiceSwitches() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let session = try await harness.signUp("carol@example.com", tenant: tenant)
            let switches = #"{"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}"#
            _ = try await harness.tenantAdmin.update(
                id: tenant, body: json(switches), updateMask: "client.permissions", scope: .project, actor: "test")
            let signUp = await #expect(throws: AuthError.self) { try await harness.signUp("dave@example.com", tenant: tenant) }
            #expect(signUp?.code == .adminOnlyOperation)
            let deletion = await #expect(throws: AuthError.self) {
                try await harness.accounts.deleteSelf(idToken: session.tokens.idToken, tenantId: tenant)
            }
            #expect(deletion?.code == .adminOnlyOperation)
            // Signing in and refreshing are not self-service sign-ups: they go on.
            _ = try await harness.signIn("carol@example.com", tenant: tenant)

            let created = try await harness.adminAccounts.create(
                tenant: TenantScope(tenant), uid: nil, email: "dave@example.com", password: "correct horse", emailVerified: false,
                profile: .init(), disabled: false, actor: "test")
            try await harness.adminAccounts.delete(tenant: TenantScope(tenant), uid: created.uid, actor: "test")
            try await harness.adminAccounts.delete(tenant: TenantScope(tenant), uid: session.user.uid, actor: "test")
            #expect(try await harness.adminAccounts.lookup(tenant: TenantScope(tenant), uid: session.user.uid) == nil)
        }
    }

    @Test("a token is good only for its own tenant: naming another answers TENANT_ID_MISMATCH; naming none means the token's")
    func tenantBoundTokens() async throws {
        try await AuthHarness.run { harness in
            let mine = try await harness.createTenant()
            let other = try await harness.createTenant()
            let session = try await harness.signUp("erin@example.com", tenant: mine)
            let error = await #expect(throws: AuthError.self) {
                try await harness.accounts.lookup(idToken: session.tokens.idToken, tenantId: other)
            }
            #expect(error?.code == .tenantIdMismatch)
            // The official JS SDK names no tenant on lookup, update or delete: the token's tenant is the request's.
            #expect(try await harness.accounts.lookup(idToken: session.tokens.idToken, tenantId: nil).uid == session.user.uid)
            #expect(try await harness.accounts.lookup(idToken: session.tokens.idToken, tenantId: mine).tenantId == mine)
            // A project user's token naming a tenant is refused too.
            _ = try await harness.tenantAdmin.updateProjectConfig(
                body: .object(["allowPasswordSignup": true]), updateMask: "allowPasswordSignup", actor: "test")
            let project = try await harness.signUp("erin@example.com", tenant: nil)
            let projectError = await #expect(throws: AuthError.self) {
                try await harness.accounts.lookup(idToken: project.tokens.idToken, tenantId: mine)
            }
            #expect(projectError?.code == .tenantIdMismatch)
            // The email is unique per tenant only.
            let twin = try await harness.signUp("erin@example.com", tenant: other)
            #expect(twin.user.uid != session.user.uid)
        }
    }
}
