import Foundation
import PortcullisCore
import PortcullisJSON
import Testing

@Suite("Self-service policy")
struct SelfServicePolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var signUpDisabled = false
        var passwordAllowed = true
        var anonymousAllowed = true
        var authDisabled = false
        let method: SignUpMethod
        let expected: AuthError.Code?
        var testDescription: String { "\(method) → \(expected?.rawValue ?? "allowed")" }
    }

    @Test(
        "sign-up decisions",
        arguments: [
            Case(method: .password, expected: nil),
            Case(method: .anonymous, expected: nil),
            Case(method: .federated, expected: nil),
            Case(signUpDisabled: true, method: .password, expected: .adminOnlyOperation),
            Case(signUpDisabled: true, method: .anonymous, expected: .adminOnlyOperation),
            Case(signUpDisabled: true, method: .federated, expected: .adminOnlyOperation),
            Case(passwordAllowed: false, method: .password, expected: .operationNotAllowed),
            Case(anonymousAllowed: false, method: .anonymous, expected: .adminOnlyOperation),
            Case(passwordAllowed: false, method: .federated, expected: nil),
            Case(authDisabled: true, method: .password, expected: .projectDisabled),
            Case(signUpDisabled: true, authDisabled: true, method: .anonymous, expected: .projectDisabled),
        ])
    func signUp(_ test: Case) {
        var settings = TenantSettings()
        settings.permissions.disabledUserSignup = test.signUpDisabled
        settings.allowPasswordSignup = test.passwordAllowed
        settings.enableAnonymousUser = test.anonymousAllowed
        settings.disableAuth = test.authDisabled
        let policy = SelfServicePolicy(settings: settings)
        if let expected = test.expected {
            let error = #expect(throws: AuthError.self) { try policy.authorizeSignUp(test.method) }
            #expect(error?.code == expected)
        } else {
            #expect(throws: Never.self) { try policy.authorizeSignUp(test.method) }
        }
    }

    @Test("self-deletion is ADMIN_ONLY_OPERATION only when disabledUserDeletion is on")
    func deletion() {
        var settings = TenantSettings()
        #expect(throws: Never.self) { try SelfServicePolicy(settings: settings).authorizeSelfDeletion() }
        settings.permissions.disabledUserDeletion = true
        let error = #expect(throws: AuthError.self) { try SelfServicePolicy(settings: settings).authorizeSelfDeletion() }
        #expect(error?.code == .adminOnlyOperation)
        #expect(error?.message == "ADMIN_ONLY_OPERATION")
        settings.permissions.disabledUserSignup = false
        #expect(SelfServicePolicy(settings: settings).allowsSelfSignUp)
        #expect(!SelfServicePolicy(settings: settings).allowsSelfDeletion)
    }
}

@Suite("Admin scope")
struct AdminAccessTests {
    @Test(
        "a project key covers everything, a tenant key only its tenant",
        arguments: [
            (AdminScope.project, AdminTarget.project, true),
            (AdminScope.project, AdminTarget.tenant("a"), true),
            (AdminScope.tenant("a"), AdminTarget.tenant("a"), true),
            (AdminScope.tenant("a"), AdminTarget.tenant("b"), false),
            (AdminScope.tenant("a"), AdminTarget.project, false),
            (AdminScope.tenant("a"), AdminTarget.tenant("A"), false),
        ])
    func authorize(scope: AdminScope, target: AdminTarget, allowed: Bool) {
        let principal = AdminPrincipal(keyId: "k", scope: scope)
        if allowed {
            #expect(throws: Never.self) { try principal.authorize(target) }
        } else {
            let error = #expect(throws: AuthError.self) { try principal.authorize(target) }
            #expect(error?.code == .permissionDenied)
            #expect(error?.code.httpStatus == 403)
        }
    }
}

@Suite("Tenant ids and error messages")
struct TenantIDTests {
    @Test("generated ids are valid, slugged from the display name, and distinct")
    func generate() {
        let ids = (0..<200).map { _ in TenantID.generate(displayName: "Acme Corp!") }
        #expect(ids.allSatisfy { $0.hasPrefix("acme-corp-") && TenantID.isValid($0) })
        #expect(Set(ids).count > 190)
        #expect(TenantID.generate(displayName: nil).hasPrefix("tenant-"))
        #expect(TenantID.generate(displayName: "!!!").hasPrefix("tenant-"))
    }

    @Test(
        "ids with anything but letters, digits and hyphens are invalid",
        arguments: [
            "", "a b", "a'b", "a;b", "a\u{0}b", "é", String(repeating: "a", count: 129), "../x",
        ])
    func invalid(id: String) {
        #expect(!TenantID.isValid(id))
    }

    @Test("a detail follows the code as CODE : detail")
    func message() {
        #expect(AuthError(.invalidArgument, detail: "x").message == "INVALID_ARGUMENT : x")
        #expect(AuthError(.tenantNotFound).message == "TENANT_NOT_FOUND")
        // An unknown tenant in an end-user body is 400 (Identity Toolkit); named by an admin path, 404.
        #expect(AuthError(.tenantNotFound).httpStatus == 400)
        #expect(AuthError(.tenantNotFound).rpcStatus == nil)
        #expect(AuthError(.tenantNotFound).onResourcePath().httpStatus == 404)
        #expect(AuthError(.tenantNotFound).onResourcePath().rpcStatus == "NOT_FOUND")
        #expect(AuthError(.tenantNotFound).onResourcePath().message == "TENANT_NOT_FOUND")
        #expect(AuthError(.emailExists).onResourcePath().httpStatus == 400)
        #expect(AuthError(.adminOnlyOperation).code.httpStatus == 400)
        #expect(AuthError(.adminOnlyOperation).code.rpcStatus == nil)
    }
}

@Suite("Provider links")
struct ProviderLinkTests {
    @Test("the password link follows email and password; identities list the email and federated ids")
    func links() {
        var user = User(tenantId: nil, uid: "u", createdAt: .distantPast)
        user.syncPasswordLink()
        #expect(user.providers.isEmpty && user.isAnonymous && user.identities.isEmpty)
        user.email = "a@example.com"
        user.syncPasswordLink()
        #expect(user.providers.isEmpty && !user.isAnonymous)  // an email alone links nothing
        user.hasPassword = true
        user.providers.append(ProviderLink(providerId: "google.com", federatedId: "g-1", email: "a@example.com"))
        user.syncPasswordLink()
        #expect(user.providers.map(\.providerId) == ["google.com", "password"])
        #expect(user.providerIds == ["google.com", "password"])
        #expect(user.identities == ["email": ["a@example.com"], "google.com": ["g-1"]])
        user.email = "b@example.com"
        user.syncPasswordLink()
        #expect(user.providers.filter { $0.providerId == "password" }.map(\.federatedId) == ["b@example.com"])
    }
}

@Suite("Session rules")
struct SessionRuleTests {
    /// A session that started at `started` (seconds) and last rotated at `rotated`.
    static func state(
        _ presented: RefreshTokenPolicy.Presented, revoked: Bool = false, started: Int64 = 100, rotated: Int64
    )
        -> RefreshTokenPolicy.State
    {
        .init(presented: presented, revoked: revoked, started: Timestamp(seconds: started), issuedAt: rotated)
    }

    @Test(
        "refresh decisions",
        arguments: [
            (SessionRuleTests.state(.current, rotated: 100), Timestamp(seconds: 0), Int64(200), 10, RefreshTokenPolicy.Decision.rotate),
            (SessionRuleTests.state(.current, revoked: true, rotated: 100), Timestamp(seconds: 0), 200, 10, .invalid),
            (SessionRuleTests.state(.previous, revoked: true, rotated: 195), Timestamp(seconds: 0), 200, 10, .invalid),
            (SessionRuleTests.state(.current, rotated: 100), Timestamp(seconds: 101), 200, 10, .expired),
            (SessionRuleTests.state(.previous, rotated: 195), Timestamp(seconds: 196), 200, 10, .expired),
            (SessionRuleTests.state(.current, rotated: 100), Timestamp(seconds: 100), 200, 10, .rotate),
            // Revocation judges the session's start, never its latest rotation: a session that
            // kept rotating after the watermark is still dead.
            (SessionRuleTests.state(.current, started: 100, rotated: 150), Timestamp(seconds: 120), 200, 10, .expired),
            // ... to the microsecond: a revocation 1 µs after the sign-in, in the same second.
            (
                .init(presented: .current, revoked: false, started: Timestamp(microseconds: 100_000_000), issuedAt: 100),
                Timestamp(microseconds: 100_000_001), 100, 10, .expired
            ),
            (
                .init(presented: .current, revoked: false, started: Timestamp(microseconds: 100_000_001), issuedAt: 100),
                Timestamp(microseconds: 100_000_001), 100, 10, .rotate
            ),
            (SessionRuleTests.state(.previous, rotated: 190), Timestamp(seconds: 0), 200, 10, .replayWithinGrace),
            (SessionRuleTests.state(.previous, rotated: 189), Timestamp(seconds: 0), 200, 10, .reuseDetected),
            (SessionRuleTests.state(.previous, rotated: 200), Timestamp(seconds: 0), 200, 0, .replayWithinGrace),
            (SessionRuleTests.state(.previous, rotated: 199), Timestamp(seconds: 0), 200, 0, .reuseDetected),
            (SessionRuleTests.state(.older, rotated: 200), Timestamp(seconds: 0), 200, 10, .reuseDetected),
        ])
    func refresh(state: RefreshTokenPolicy.State, validSince: Timestamp, now: Int64, grace: Int, expected: RefreshTokenPolicy.Decision) {
        #expect(RefreshTokenPolicy.decide(state, validSince: validSince, now: now, graceSeconds: grace) == expected)
    }

    @Test(
        "the grace window discounts the time PostgreSQL was unreachable after the rotation, and only that",
        arguments: [
            // Rotated at 100; unreachable 102–162; a replay at 170 has spent 10 s: a replay, at 171 a reuse.
            ([102..<162], 170, RefreshTokenPolicy.Decision.replayWithinGrace),
            ([102..<162], 171, .reuseDetected),
            // An outage before the rotation, or after the replay, counts for nothing.
            ([40..<99], 111, .reuseDetected),
            ([111..<200], 111, .reuseDetected),
            // One that began before the rotation counts from the rotation on; two count both.
            ([90..<150], 160, .replayWithinGrace),
            ([90..<150], 161, .reuseDetected),
            ([101..<106, 110..<150], 150, .replayWithinGrace),
            ([101..<106, 110..<150], 155, .replayWithinGrace),
            ([101..<106, 110..<150], 156, .reuseDetected),
        ] as [([Range<Int64>], Int64, RefreshTokenPolicy.Decision)])
    func graceThroughOutages(outages: [Range<Int64>], now: Int64, expected: RefreshTokenPolicy.Decision) {
        let state = SessionRuleTests.state(.previous, rotated: 100)
        #expect(
            RefreshTokenPolicy.decide(state, validSince: Timestamp(seconds: 0), now: now, graceSeconds: 10, outages: outages)
                == expected)
        // A token two rotations old is reuse whatever the outages.
        #expect(
            RefreshTokenPolicy.decide(
                SessionRuleTests.state(.older, rotated: 100), validSince: Timestamp(seconds: 0), now: now, graceSeconds: 10,
                outages: outages) == .reuseDetected)
    }

    @Test("ID tokens are judged in whole seconds: an auth_time in the watermark's own second survives")
    func idTokenRevocation() {
        let watermark = Timestamp(microseconds: 100_500_000)  // 100.5 s
        #expect(SessionPolicy.isRevoked(authTime: 99, validSince: watermark))
        #expect(!SessionPolicy.isRevoked(authTime: 100, validSince: watermark))
        #expect(!SessionPolicy.isRevoked(authTime: 101, validSince: watermark))
        #expect(SessionPolicy.isRevoked(sessionStart: Timestamp(microseconds: 100_400_000), validSince: watermark))
        #expect(!SessionPolicy.isRevoked(sessionStart: watermark, validSince: watermark))
        #expect(throws: AuthError(.tokenExpired)) { try SessionPolicy.requireLive(authTime: 99, validSince: watermark, disabled: true) }
        #expect(throws: AuthError(.userDisabled)) { try SessionPolicy.requireLive(authTime: 100, validSince: watermark, disabled: true) }
        #expect(Timestamp(microseconds: -1).seconds == -1 && Timestamp(microseconds: 1_999_999).seconds == 1)
    }

    @Test("a gateway revocation covers its own second and moves past every session started so far")
    func revocationWatermark() {
        let now = Timestamp(microseconds: 100_400_000)  // 100.4 s
        let watermark = SessionPolicy.revocationWatermark(now: now, validSince: Timestamp(seconds: 0), lastSignIn: now)
        #expect(watermark == Timestamp(seconds: 101))
        // A token minted earlier in the revocation's second dies with it.
        #expect(SessionPolicy.isRevoked(authTime: 100, validSince: watermark))
        #expect(!SessionPolicy.isRevoked(authTime: 101, validSince: watermark))
        // On a second boundary the second itself is covered.
        #expect(
            SessionPolicy.revocationWatermark(now: Timestamp(seconds: 100), validSince: .init(seconds: 0), lastSignIn: nil)
                == Timestamp(seconds: 101))
        // A second revocation in the same second ends the first one's caller's session too.
        #expect(
            SessionPolicy.revocationWatermark(now: now, validSince: watermark, lastSignIn: watermark)
                == Timestamp(seconds: 102))
        // A session another instance's clock started ahead of ours is covered.
        #expect(
            SessionPolicy.revocationWatermark(
                now: now, validSince: .init(seconds: 0), lastSignIn: Timestamp(microseconds: 103_200_000))
                == Timestamp(seconds: 104))
    }

    @Test("a session asked to start inside a revocation's second starts when it is over; an admin's far watermark stands")
    func sessionStart() {
        let requested = Timestamp(microseconds: 100_400_000)
        #expect(SessionPolicy.sessionStart(requested: requested, validSince: Timestamp(seconds: 101)) == Timestamp(seconds: 101))
        #expect(SessionPolicy.sessionStart(requested: requested, validSince: Timestamp(seconds: 100)) == requested)
        #expect(SessionPolicy.sessionStart(requested: requested, validSince: Timestamp(seconds: 3_600)) == requested)
    }

    @Test(
        "what each change revokes",
        arguments: [
            (UserUpdate(passwordHash: "h"), true),
            (UserUpdate(email: .some("a@example.com")), true),
            (UserUpdate(email: .some(nil)), true),
            (UserUpdate(disabled: true), true),
            (UserUpdate(disabled: false), false),
            (UserUpdate(displayName: .some("n"), photoURL: .some(nil)), false),
            (UserUpdate(emailVerified: true, customAttributes: ["role": "admin"]), false),
        ])
    func revocations(update: UserUpdate, revokes: Bool) {
        var applied = update
        let now = Timestamp(seconds: 500)
        UserUpdatePolicy.applyImplications(to: &applied, now: now)
        #expect(applied.revocation == (revokes ? .now(now) : nil))
        #expect(applied.changesRevocationState == (revokes || update.disabled != nil))
    }

    @Test("an admin's explicit validSince is taken as given, even with a disable")
    func explicitWatermark() {
        var update = UserUpdate(disabled: true, revocation: .at(Timestamp(seconds: 42)))
        UserUpdatePolicy.applyImplications(to: &update, now: Timestamp(seconds: 500))
        #expect(update.revocation == .at(Timestamp(seconds: 42)))
    }

    @Test("under email privacy no answer tells whether an address has an account; without it, Firebase's answers")
    func emailPrivacy() {
        var settings = TenantSettings()
        let open = EmailPrivacyPolicy(settings: settings)
        settings.enableImprovedEmailPrivacy = true
        let protected = EmailPrivacyPolicy(settings: settings)
        #expect(open.wrongCredentials(emailKnown: true) == AuthError(.invalidPassword))
        #expect(open.wrongCredentials(emailKnown: false) == AuthError(.emailNotFound))
        #expect(protected.wrongCredentials(emailKnown: true) == AuthError(.invalidLoginCredentials))
        #expect(protected.wrongCredentials(emailKnown: false) == AuthError(.invalidLoginCredentials))
        // The other answers that could tell whether an address has an account.
        #expect(open.listsSignInMethods && !protected.listsSignInMethods)
        #expect(open.revealsTakenAddress && !protected.revealsTakenAddress)
        #expect(open.resetRefusal(accountExists: false) == AuthError(.emailNotFound))
        #expect(open.resetRefusal(accountExists: true) == AuthError(.userDisabled))
        #expect(protected.resetRefusal(accountExists: false) == nil && protected.resetRefusal(accountExists: true) == nil)
        let flood = EmailActionPolicy.floodError(.passwordReset)
        #expect(protected.hides(flood, refusing: .passwordReset))
        #expect(!open.hides(flood, refusing: .passwordReset))
        #expect(!protected.hides(flood, refusing: .verifyEmail))
        #expect(!protected.hides(AuthError(.userDisabled), refusing: .passwordReset))
    }

    @Test("recent sign-in, custom claims, passwords and emails")
    func rules() throws {
        #expect(throws: Never.self) { try SessionPolicy.requireRecentSignIn(authTime: 100, now: 400, windowSeconds: 300) }
        #expect(throws: AuthError(.credentialTooOldLoginAgain)) {
            try SessionPolicy.requireRecentSignIn(authTime: 100, now: 401, windowSeconds: 300)
        }
        // Anonymous accounts have no credential to sign in again with.
        #expect(throws: Never.self) {
            try SessionPolicy.requireRecentSignIn(authTime: 100, now: 9_999, windowSeconds: 300, anonymous: true)
        }

        #expect(throws: AuthError(.forbiddenClaim, detail: "aud")) { try CustomClaims.validate(["aud": "x", "role": "y"]) }
        #expect(throws: AuthError(.claimsTooLarge)) { try CustomClaims.validate(["big": .string(String(repeating: "x", count: 1000))]) }
        #expect(throws: AuthError(.invalidClaims)) { try CustomClaims.parse("[1]") }
        #expect(try CustomClaims.parse(#"{"role":"admin"}"#) == ["role": "admin"])

        var policy = TenantSettings.PasswordPolicy()
        #expect(throws: AuthError(.weakPassword, detail: "Password should be at least 6 characters")) { try policy.check("12345") }
        policy.enforcementState = .enforce
        policy.minPasswordLength = 8
        policy.containsNumericCharacter = true
        #expect(throws: AuthError(.weakPassword, detail: "Password should be at least 8 characters")) { try policy.check("1234567") }
        #expect(throws: AuthError.self) { try policy.check("abcdefgh") }
        #expect(throws: Never.self) { try policy.check("abcdefg1") }

        for bad in ["", "a", "a@b", "@b.com", "a@.com", "a@b.com.", "a b@c.com", "a@b,c.com"] {
            #expect(throws: AuthError(.invalidEmail)) { try EmailAddress.validate(bad) }
        }
        // Stored and compared in lower case, as Firebase canonicalises them.
        #expect(try EmailAddress.validate(" Ada@Example.com ") == "ada@example.com")
    }
}
