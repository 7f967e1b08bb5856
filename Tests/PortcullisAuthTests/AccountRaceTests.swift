import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth

/// End-user writes that two requests can race: sign-up and email claims on one
/// address, the anonymous upgrade, sign-ins recording the last login, and profile
/// updates against each other and against an admin's disable.
@Suite("Account races")
struct AccountRaceTests {
    /// Right passwords are no failed guesses, but a burst of them is counted before hashing:
    /// races of sign-ins turn the abuse limits off so the limits do not decide the outcome.
    static let unlimited = AbuseLimits(failedSignInsPerAccount: 0, failedSignInsPerIP: 0, signUpsPerIP: 0)

    @Test("20 sign-ups and 10 email changes racing for one address: exactly one account holds it, 29 get EMAIL_EXISTS")
    func oneAddress() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            var signedUp: [AccountService.SignedIn] = []
            for index in 0..<10 { signedUp.append(try await harness.signUp("mover\(index)@example.com", tenant: tenant)) }
            let movers = signedUp
            let outcomes = try await race(30) { index in
                guard index >= 10 else {
                    let (user, _) = try await harness.accounts.update(
                        idToken: movers[index].tokens.idToken, tenantId: tenant, changes: .init(email: "Wanted@Example.com"))
                    return user.uid
                }
                let email = index % 2 == 0 ? "wanted@example.com" : "WANTED@example.com"
                return try await harness.signUp(email, tenant: tenant).user.uid
            }
            #expect(outcomes.successes().count == 1)
            #expect(outcomes.codes() == [.emailExists: 29])
            let holder = try #require(try await harness.users.find(tenant: TenantScope(tenant), email: "wanted@example.com"))
            #expect([holder.user.uid] == outcomes.successes())
            let wanted = "wanted@example.com"
            #expect(try await harness.count("SELECT count(*) FROM users WHERE tenant_id = \(tenant) AND lower(email) = \(wanted)") == 1)
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM user_providers WHERE tenant_id = \(tenant) AND federated_id = \(wanted)") == 1)
            // The movers that lost keep their own address and password.
            for (index, mover) in movers.enumerated() where mover.user.uid != holder.user.uid {
                #expect(try await harness.signIn("mover\(index)@example.com", tenant: tenant).user.uid == mover.user.uid)
            }
        }
    }

    @Test("20 upgrades of one anonymous account at once: exactly one links its email and password, 19 get EMAIL_EXISTS")
    func anonymousUpgrade() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant(
                #"{"displayName":"anon","allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            let guest = try await harness.accounts.signUp(
                tenantId: tenant, email: nil, password: nil, profile: .init(), idToken: nil, client: nil)
            let outcomes = try await race(20) { index in
                let upgraded = try await harness.accounts.signUp(
                    tenantId: tenant, email: "guest\(index)@example.com", password: "password \(index)", profile: .init(),
                    idToken: guest.tokens.idToken, client: nil)
                return (index, upgraded.user)
            }
            #expect(outcomes.codes() == [.emailExists: 19])
            let (winner, upgraded) = try #require(outcomes.successes().first)
            #expect(upgraded.uid == guest.user.uid)
            let stored = try #require(try await harness.users.find(tenant: TenantScope(tenant), uid: guest.user.uid)?.user)
            #expect(stored.email == "guest\(winner)@example.com" && stored.providers.map(\.providerId) == ["password"])
            #expect(try await harness.count("SELECT count(*) FROM users WHERE tenant_id = \(tenant)") == 1)
            #expect(try await harness.signIn("guest\(winner)@example.com", "password \(winner)", tenant: tenant).user.uid == guest.user.uid)
        }
    }

    @Test(
        "20 sign-ins on two instances 5 s apart all succeed; the last login never runs back; auth_time is each session's start"
    )
    func signInsRecordTheLastLogin() async throws {
        try await AuthHarness.run(abuse: Self.unlimited) { harness in
            let tenant = try await harness.createTenant()
            let account = try await harness.signUp("racer@example.com", tenant: tenant)
            harness.clock.advance(seconds: 60)
            let behind = harness.clock.now()
            let ahead = AuthHarness(database: harness.database, clock: ManualClock(behind.adding(seconds: 5)), abuse: Self.unlimited)
            let outcomes = try await race(20) { index in
                try await (index % 2 == 0 ? harness : ahead).signIn("racer@example.com", tenant: tenant).tokens
            }
            let sessions = outcomes.successes()
            #expect(sessions.count == 20, "\(outcomes.codes())")
            for tokens in sessions {
                let authTime = try claims(of: tokens.idToken).value(at: ["auth_time"])
                #expect(authTime == .integer(behind.seconds) || authTime == .integer(behind.seconds + 5))
                // A refresh reports the session's stored start: the ID token said the same.
                let (refreshed, _) = try await harness.tokens.refresh(tokens.refreshToken)
                #expect(try claims(of: refreshed.idToken).value(at: ["auth_time"]) == authTime)
            }
            let stored = try await harness.users.find(tenant: TenantScope(tenant), uid: account.user.uid)?.user
            #expect(stored?.lastLoginAt == behind.adding(seconds: 5))
        }
    }

    @Test("50 profile updates of two disjoint fields at once: both fields hold a value some update wrote")
    func disjointProfileFields() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            for round in 0..<3 {
                let session = try await harness.signUp("profile\(round)@example.com", tenant: tenant)
                let outcomes = try await race(50) { index in
                    let profile: AccountService.Profile =
                        index % 2 == 0
                        ? .init(displayName: "name \(index)") : .init(photoURL: "https://example.com/\(index).png")
                    return try await harness.accounts.update(
                        idToken: session.tokens.idToken, tenantId: tenant, changes: .init(profile: profile)
                    ).user.uid
                }
                #expect(outcomes.successes().count == 50)
                let user = try #require(try await harness.users.find(tenant: TenantScope(tenant), uid: session.user.uid)?.user)
                let names = Set(stride(from: 0, to: 50, by: 2).map { "name \($0)" })
                let photos = Set(stride(from: 1, to: 50, by: 2).map { "https://example.com/\($0).png" })
                #expect(user.displayName.map(names.contains) == true, "\(user.displayName ?? "no name")")
                #expect(user.photoURL.map(photos.contains) == true, "\(user.photoURL ?? "no photo")")
            }
        }
    }

    @Test("30 end-user profile updates racing an admin's disable: the user ends disabled and its session dead, every time")
    func profileUpdatesRaceDisable() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            for round in 0..<3 {
                let session = try await harness.signUp("disabled\(round)@example.com", tenant: tenant)
                let outcomes = try await race(31) { index in
                    guard index < 30 else {
                        return try await harness.adminAccounts.update(
                            tenant: TenantScope(tenant), uid: session.user.uid, .init(disabled: true), actor: "test"
                        ).disabled
                    }
                    let changes = AccountService.Changes(profile: .init(displayName: "name \(index)"))
                    return try await harness.accounts.update(idToken: session.tokens.idToken, tenantId: tenant, changes: changes)
                        .user.disabled
                }
                #expect(outcomes[30].value == true)
                #expect(Set(outcomes.codes().keys).isSubset(of: [.userDisabled, .tokenExpired]), "\(outcomes.codes())")
                #expect(try await harness.users.find(tenant: TenantScope(tenant), uid: session.user.uid)?.user.disabled == true)
                let refresh = await #expect(throws: AuthError.self) { try await harness.tokens.refresh(session.tokens.refreshToken) }
                #expect([.tokenExpired, .userDisabled].contains(refresh?.code), "\(String(describing: refresh))")
            }
        }
    }
}
