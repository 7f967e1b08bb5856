import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth

/// Refresh-token rotation under concurrency: one token from many clients, reuse
/// against a rotating client, an admin's disable against a rotating client, and
/// the sweeper against refreshes.
@Suite("Token races")
struct TokenRaceTests {
    @Test("30 clients refreshing one token at once all get the same successor, and the session lives on")
    func oneTokenManyClients() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let session = try await harness.signUp("tabs@example.com", tenant: tenant)
            harness.clock.advance(seconds: 5)
            let outcomes = try await race(30) { _ in try await harness.tokens.refresh(session.tokens.refreshToken) }
            let results = outcomes.successes()
            #expect(results.count == 30, "\(outcomes.codes())")
            #expect(Set(results.map(\.tokens.refreshToken)).count == 1, "one successor")
            for (tokens, user) in results {
                #expect(user.uid == session.user.uid)
                #expect(try await harness.tokens.verifyIDToken(tokens.idToken).authTime == session.user.lastLoginAt?.seconds)
            }
            // Replays within the grace window are no reuse: the successor rotates as usual.
            let successor = try #require(results.first).tokens.refreshToken
            _ = try await harness.tokens.refresh(successor)
        }
    }

    @Test("15 replays of a token rotated past the grace window racing 15 refreshes of the current one: the session ends")
    func reuseRacesTheRotatingClient() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            for round in 0..<3 {
                let session = try await harness.signUp("stolen\(round)@example.com", tenant: tenant)
                let (current, _) = try await harness.tokens.refresh(session.tokens.refreshToken)
                harness.clock.advance(seconds: 11)
                let outcomes = try await race(30) { index in
                    let presented = index % 2 == 0 ? session.tokens.refreshToken : current.refreshToken
                    return try await harness.tokens.refresh(presented).tokens.refreshToken
                }
                let replays = stride(from: 0, to: 30, by: 2).map { outcomes[$0] }
                #expect(replays.codes() == [.invalidRefreshToken: 15], "every replay is refused")
                #expect(Set(outcomes.codes().keys).isSubset(of: [.invalidRefreshToken]), "\(outcomes.codes())")
                // Whatever the legitimate client got before the reuse was seen is dead now.
                for token in Set(outcomes.successes() + [current.refreshToken]) {
                    await #expect(throws: AuthError(.invalidRefreshToken)) { try await harness.tokens.refresh(token) }
                }
            }
        }
    }

    @Test("a session rotating continuously dies with an admin's disable: no refresh that starts after it succeeds")
    func rotationRacesDisable() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let session = try await harness.signUp("spinner@example.com", tenant: tenant)
            let disabled = Flag()
            let (rotated, rotating) = AsyncStream.makeStream(of: Void.self)
            typealias Attempt = (afterDisable: Bool, code: AuthError.Code?)
            let attempts = try await withThrowingTaskGroup(of: [Attempt].self) { group in
                group.addTask {
                    // The rotating client always presents the latest token it holds.
                    var token = session.tokens.refreshToken
                    var attempts: [Attempt] = []
                    var afterDisableCount = 0
                    while afterDisableCount < 20, attempts.count < 10_000 {
                        let afterDisable = disabled.isSet
                        do {
                            token = try await harness.tokens.refresh(token).tokens.refreshToken
                            attempts.append((afterDisable, nil))
                        } catch let error as AuthError {
                            attempts.append((afterDisable, error.code))
                        }
                        if afterDisable { afterDisableCount += 1 }
                        if attempts.count == 5 { rotating.yield() }
                    }
                    rotating.finish()
                    return attempts
                }
                group.addTask {
                    for await _ in rotated { break }
                    _ = try await harness.adminAccounts.update(
                        tenant: TenantScope(tenant), uid: session.user.uid, .init(disabled: true), actor: "test")
                    disabled.set()
                    return []
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let after = attempts.filter(\.afterDisable)
            #expect(after.count == 20)
            #expect(attempts.prefix(5).allSatisfy { $0.code == nil }, "the session rotated before the disable")
            #expect(after.allSatisfy { [.tokenExpired, .userDisabled].contains($0.code) }, "\(after.map(\.code))")
        }
    }

    @Test("two sweepers racing 30 refreshes of live sessions: exactly the dead sessions go, once, and every refresh succeeds")
    func sweepersRaceRefreshes() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            var liveTokens: [String] = []
            liveTokens.append(try await harness.signUp("alive@example.com", tenant: tenant).tokens.refreshToken)
            let doomed = try await harness.signUp("doomed@example.com", tenant: tenant)
            for _ in 1..<10 {
                liveTokens.append(try await harness.signIn("alive@example.com", tenant: tenant).tokens.refreshToken)
                _ = try await harness.signIn("doomed@example.com", tenant: tenant)
            }
            // The doomed user's ten sessions end with an admin's revocation; then everything ages 40 days.
            harness.clock.advance(seconds: 1)
            _ = try await harness.adminAccounts.update(
                tenant: TenantScope(tenant), uid: doomed.user.uid, .init(validSince: harness.clock.now().seconds), actor: "test")
            harness.clock.advance(seconds: 40 * 86_400)
            let sweepers = [harness, harness.instance(clock: harness.clock)].map { $0.sweeper(batchSize: 2) }
            let live = liveTokens
            let now = harness.clock.now()
            let outcomes = try await race(32) { index in
                guard index >= 2 else { return await sweepers[index].sweep(now: now).sessions }
                _ = try await harness.tokens.refresh(live[index % 10])
                return 0
            }
            #expect(outcomes.codes().isEmpty, "\(outcomes.codes())")
            #expect((outcomes[0].value ?? 0) + (outcomes[1].value ?? 0) == 10)
            for (user, remaining) in [("alive@example.com", 10), ("doomed@example.com", 0)] {
                let uid = try #require(try await harness.users.find(tenant: TenantScope(tenant), email: user)?.user.uid)
                let stored = try await harness.count(
                    "SELECT count(*) FROM refresh_sessions WHERE tenant_id = \(tenant) AND uid = \(uid)")
                #expect(stored == Int64(remaining), "\(user)")
            }
        }
    }
}
