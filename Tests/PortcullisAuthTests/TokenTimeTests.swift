import Foundation
import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// `TokenService`'s time rules, judged by the clock: ID-token expiry and issue-time
/// skew, and the refresh token's grace window (DESIGN.md §3).
@Suite("Token time rules")
struct TokenTimeTests {
    @Test("an ID token verifies until the second before its expiry and is TOKEN_EXPIRED from it, cached or not", arguments: [nil, 600])
    func idTokenExpiry(lifetime: Int?) async throws {
        try await AuthHarness.run { harness in
            let setting = lifetime.map { #","idTokenLifetimeSeconds":\#($0)"# } ?? ""
            let tenant = try await harness.createTenant(#"{"displayName":"e","allowPasswordSignup":true"# + setting + "}")
            let seconds = Int64(lifetime ?? 3600)
            let session = try await harness.signUp("expiry@example.com", tenant: tenant)
            #expect(session.tokens.expiresIn == Int(seconds))
            // Verified once now: later checks of the same token come from the verified-token cache.
            _ = try await harness.tokens.verifyIDToken(session.tokens.idToken)
            harness.clock.advance(seconds: seconds - 1)
            #expect(try await harness.tokens.verifyIDToken(session.tokens.idToken).subject == session.user.uid)
            harness.clock.advance(seconds: 1)
            let expired = await #expect(throws: AuthError.self) { try await harness.tokens.verifyIDToken(session.tokens.idToken) }
            #expect(expired?.code == .tokenExpired)
            // The refresh token outlives it: a fresh ID token, same auth_time, issued now.
            let (fresh, _) = try await harness.tokens.refresh(session.tokens.refreshToken)
            let claims = try await harness.tokens.verifyIDToken(fresh.idToken)
            #expect(claims.authTime == session.user.lastLoginAt?.seconds)
            #expect(claims.issuedAt == harness.clock.now().seconds && claims.expiresAt == claims.issuedAt + seconds)
        }
    }

    @Test("a refresh records lastRefreshAt at the injected clock's time, to the minute, not at the database's")
    func lastRefreshFollowsTheClock() async throws {
        try await AuthHarness.run { harness in
            harness.clock.set(harness.clock.now().adding(seconds: -86_400))
            let tenant = try await harness.createTenant()
            let session = try await harness.signUp("refresh@example.com", tenant: tenant)
            harness.clock.advance(seconds: 120)
            let (first, _) = try await harness.tokens.refresh(session.tokens.refreshToken)
            let refreshedAt = harness.clock.now().seconds
            #expect(
                try await harness.users.find(tenant: TenantScope(tenant), uid: session.user.uid)?.user.lastRefreshAt
                    == Date(timeIntervalSince1970: Double(refreshedAt)))
            // Within the minute the row is not written again.
            harness.clock.advance(seconds: 30)
            _ = try await harness.tokens.refresh(first.refreshToken)
            #expect(
                try await harness.users.find(tenant: TenantScope(tenant), uid: session.user.uid)?.user.lastRefreshAt
                    == Date(timeIntervalSince1970: Double(refreshedAt)))
        }
    }

    @Test("a token issued more than 60 s ahead of this clock is INVALID_ID_TOKEN; within the skew it verifies")
    func issuedInTheFuture() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let now = harness.clock.now()
            // Another instance, its clock two minutes ahead, signs the token.
            let ahead = harness.instance(clock: ManualClock(now.adding(seconds: 120)))
            let session = try await ahead.signUp("skew@example.com", tenant: tenant)
            let early = await #expect(throws: AuthError.self) { try await harness.tokens.verifyIDToken(session.tokens.idToken) }
            #expect(early?.code == .invalidIdToken)
            harness.clock.advance(seconds: 59)
            let stillEarly = await #expect(throws: AuthError.self) { try await harness.tokens.verifyIDToken(session.tokens.idToken) }
            #expect(stillEarly?.code == .invalidIdToken)
            harness.clock.advance(seconds: 1)
            #expect(try await harness.tokens.verifyIDToken(session.tokens.idToken).issuedAt == now.seconds + 120)
        }
    }

    @Test(
        "a rotated refresh token replayed within the grace window gets the same successor; one second later it revokes the session",
        arguments: [nil, 0, 30])
    func graceWindow(grace: Int?) async throws {
        try await AuthHarness.run { harness in
            let setting = grace.map { #","refreshTokenReuseGraceSeconds":\#($0)"# } ?? ""
            let tenant = try await harness.createTenant(#"{"displayName":"g","allowPasswordSignup":true"# + setting + "}")
            let window = Int64(grace ?? 10)
            let session = try await harness.signUp("grace@example.com", tenant: tenant)
            // The window runs from the rotation, not from the sign-in.
            harness.clock.advance(seconds: 100)
            let (successor, _) = try await harness.tokens.refresh(session.tokens.refreshToken)
            harness.clock.advance(seconds: window)
            let (replayed, _) = try await harness.tokens.refresh(session.tokens.refreshToken)
            #expect(replayed.refreshToken == successor.refreshToken)
            #expect(try await harness.tokens.verifyIDToken(replayed.idToken).issuedAt == harness.clock.now().seconds)

            harness.clock.advance(seconds: 1)
            let reuse = await #expect(throws: AuthError.self) { try await harness.tokens.refresh(session.tokens.refreshToken) }
            #expect(reuse?.code == .invalidRefreshToken)
            // Reuse revoked the whole session: the token the legitimate client holds is dead too.
            let current = await #expect(throws: AuthError.self) { try await harness.tokens.refresh(successor.refreshToken) }
            #expect(current?.code == .invalidRefreshToken)
            // Other sessions of the user are untouched.
            let other = try await harness.signIn("grace@example.com", tenant: tenant)
            _ = try await harness.tokens.refresh(other.tokens.refreshToken)
        }
    }

    @Test(
        "the grace window's clock stops while PostgreSQL is unreachable: a refresh answered 503 as the database went down is retried after it, and is a replay, not a reuse"
    )
    func graceWindowThroughAnOutage() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            // An instance whose database times its outages on a clock of the test's.
            let clock = ManualClock(harness.clock.now())
            let instance = harness.instance(clock: clock)
            let session = try await instance.signUp("outage@example.com", tenant: tenant)
            let (successor, _) = try await instance.tokens.refresh(session.tokens.refreshToken)
            // The rotation committed; its answer is lost as the primary stops answering two
            // seconds later. A failover takes a minute, then the client retries.
            clock.advance(seconds: 2)
            instance.database.setReachable(false)
            clock.advance(seconds: 60)
            instance.database.setReachable(true)
            #expect(instance.database.outages.map(\.count) == [60])
            clock.advance(seconds: 8)
            let (replayed, _) = try await instance.tokens.refresh(session.tokens.refreshToken)
            #expect(replayed.refreshToken == successor.refreshToken)
            // Ten seconds of the window spent while the database answered: the next replay is reuse.
            clock.advance(seconds: 1)
            let reuse = await #expect(throws: AuthError.self) { try await instance.tokens.refresh(session.tokens.refreshToken) }
            #expect(reuse?.code == .invalidRefreshToken)
            let current = await #expect(throws: AuthError.self) { try await instance.tokens.refresh(successor.refreshToken) }
            #expect(current?.code == .invalidRefreshToken)
        }
    }

    @Test("a token two rotations old is reuse at once, whatever the grace window")
    func olderTokenIsReuse() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant(
                #"{"displayName":"o","allowPasswordSignup":true,"refreshTokenReuseGraceSeconds":300}"#)
            let session = try await harness.signUp("older@example.com", tenant: tenant)
            let (first, _) = try await harness.tokens.refresh(session.tokens.refreshToken)
            let (second, _) = try await harness.tokens.refresh(first.refreshToken)
            let reuse = await #expect(throws: AuthError.self) { try await harness.tokens.refresh(session.tokens.refreshToken) }
            #expect(reuse?.code == .invalidRefreshToken)
            let current = await #expect(throws: AuthError.self) { try await harness.tokens.refresh(second.refreshToken) }
            #expect(current?.code == .invalidRefreshToken)
        }
    }
}
