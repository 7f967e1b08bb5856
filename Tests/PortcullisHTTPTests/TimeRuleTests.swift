import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// The time rules of DESIGN.md §1 and §3, driven by a hand-set clock instead of sleeps.
@Suite("Time rules")
struct TimeRuleTests {
    static func run(_ body: @Sendable (TestGateway, ManualClock, String) async throws -> Void) async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"time","allowPasswordSignup":true}"#)
            try await body(gateway, clock, tenant)
        }
    }

    @Test("a password change needs a sign-in within the recent-login window (300 s); signing in again restores it")
    func recentLoginWindow() async throws {
        try await Self.run { gateway, clock, tenant in
            let session = try await gateway.signUp("recent@example.com", tenant: tenant)
            clock.advance(seconds: 300)
            let inTime = try await gateway.endUser(
                "accounts:update", ["idToken": .string(session.idToken), "displayName": "still fine"], tenant: tenant)
            #expect(inTime.status == .ok)
            clock.advance(seconds: 1)
            try await gateway.endUser("accounts:update", ["idToken": .string(session.idToken), "password": "a new secret"], tenant: tenant)
                .expectEnvelope(.badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            let again = try await gateway.signIn("recent@example.com", tenant: tenant)
            #expect(
                try await gateway.endUser(
                    "accounts:update", ["idToken": .string(again.idToken), "password": "a new secret"], tenant: tenant
                ).status == .ok)
        }
    }

    @Test("an ID token expires after its lifetime; the refresh token outlives it and mints a fresh one, keeping auth_time")
    func idTokenLifetime() async throws {
        try await Self.run { gateway, clock, tenant in
            let session = try await gateway.signUp("expiry@example.com", tenant: tenant)
            clock.advance(seconds: 3599)
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: tenant).status == .ok)
            clock.advance(seconds: 1)
            try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: tenant)
                .expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            let refreshed = try await gateway.refresh(session.refreshToken).json()
            guard case .string(let fresh)? = refreshed.value(at: ["id_token"]) else { throw TestSetupError("no id_token") }
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(fresh)], tenant: tenant).status == .ok)
            let freshClaims = try JSONValue.parse(Base64URL.decode(String(fresh.split(separator: ".")[1])) ?? [])
            #expect(freshClaims.value(at: ["auth_time"]) == session.claims.value(at: ["auth_time"]))
        }
    }

    @Test("a replayed refresh token gets the same successor within the grace window (10 s), and revokes the session after it")
    func refreshGraceWindow() async throws {
        try await Self.run { gateway, clock, tenant in
            let session = try await gateway.signUp("grace@example.com", tenant: tenant)
            func successor(_ token: String) async throws -> String? {
                guard case .string(let next)? = try await gateway.refresh(token).json().value(at: ["refresh_token"]) else { return nil }
                return next
            }
            let first = try await successor(session.refreshToken)
            clock.advance(seconds: 10)
            #expect(try await successor(session.refreshToken) == first)
            clock.advance(seconds: 1)
            try await gateway.refresh(session.refreshToken).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            // The reuse revoked the whole session: its current token is dead too.
            try await gateway.refresh(first ?? "").expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
        }
    }
}
