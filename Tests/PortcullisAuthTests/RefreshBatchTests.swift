import PortcullisCore
import PortcullisCrypto
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth
@testable import PortcullisStore

/// Concurrent refreshes share one statement (``RefreshSessionRepository``'s batcher): each
/// request must still get its own session's answer, whatever else rode in its batch.
@Suite("Batched refreshes and session starts")
struct RefreshBatchTests {
    @Test(
        "42 rotations of 41 sessions in two tenants through one slot: each its own user; a doubled token one successor; a wrong one refused"
    )
    func batchedRotations() async throws {
        try await AuthHarness.run { harness in
            let tenants = [try await harness.createTenant(), try await harness.createTenant()]
            var sessions: [(tenant: String, uid: String, token: RefreshToken)] = []
            for index in 0..<41 {
                let tenant = tenants[index % 2]
                let signedIn = try await harness.signUp("batch\(index)@example.com", tenant: tenant)
                let token = try #require(RefreshToken(parsing: signedIn.tokens.refreshToken))
                sessions.append((tenant, signedIn.user.uid, token))
            }
            // One slot: whatever arrives while a batch runs waits and rides in the next one.
            let repository = RefreshSessionRepository(
                database: harness.database, logger: TestDatabase.logger, concurrentBatches: 1)
            let key = RefreshTokenKey(masterKey: AuthHarness.masterKey)
            harness.clock.advance(seconds: 1)
            let now = harness.clock.now().seconds
            // Requests 0–39 rotate sessions 0–39; 40 presents session 0's token again; 41 presents
            // session 40's with a wrong secret (which ends that session, as any unknown token of it would).
            let all = sessions
            let outcomes = try await race(42) { index in
                let session = all[index == 40 ? 0 : index == 41 ? 40 : index]
                let presented = index == 41 ? [UInt8](repeating: 7, count: 32) : session.token.secretHash
                let rotation = RefreshSessionRepository.Rotation(
                    tenant: TenantScope(session.tenant), sessionId: session.token.sessionId, presentedHash: presented,
                    successorHash: session.token.successor(using: key).secretHash, now: now)
                // The batched common case, then (for anything off) the policy's own transaction, as a refresh does.
                if let rotated = try await repository.rotateCurrent(rotation) { return rotated.user }
                return try await harness.tokens.rotateByPolicy(rotation, graceSeconds: 10).user
            }
            for index in 0..<41 {
                let expected = sessions[index < 40 ? index : 0]
                #expect(outcomes[index].value?.uid == expected.uid, "request \(index): \(String(describing: outcomes[index].code))")
                #expect(outcomes[index].value?.tenantId == expected.tenant)
            }
            #expect(outcomes[41].code == .invalidRefreshToken)
            // Every session now holds its successor: the next refresh is the successor's.
            for session in sessions.prefix(40) {
                let successor = session.token.successor(using: key)
                let refreshed = try await harness.tokens.refresh(successor.string)
                #expect(refreshed.user.uid == session.uid)
            }
        }
    }
}

extension RefreshBatchTests {
    @Test("32 session starts through one slot: three per user each get a session; a disabled user and a stale password none")
    func batchedSessionStarts() async throws {
        try await AuthHarness.run { harness in
            let tenants = [try await harness.createTenant(), try await harness.createTenant()]
            var users: [(tenant: String, user: User)] = []
            for index in 0..<11 {
                let tenant = tenants[index % 2]
                users.append((tenant, try await harness.signUp("start\(index)@example.com", tenant: tenant).user))
            }
            let disabled = users[10]
            let disabling: PostgresQuery = """
                WITH disabled AS (UPDATE users SET disabled = true WHERE tenant_id = \(disabled.tenant) AND uid = \(disabled.user.uid)
                    RETURNING 1)
                SELECT count(*) FROM disabled
                """
            #expect(try await harness.count(disabling) == 1)
            let repository = RefreshSessionRepository(database: harness.database, logger: TestDatabase.logger, concurrentBatches: 1)
            harness.clock.advance(seconds: 1)
            let now = harness.clock.now()
            let all = users
            // Requests 0–29: users 0–9, three sign-ins each; 30: the disabled user; 31: user 0 with a
            // password hash that is not (or no longer) the stored one.
            let outcomes = try await race(32) { index in
                let (tenant, user) = all[index < 30 ? index % 10 : index == 30 ? 10 : 0]
                let proven = index == 31 ? (email: user.email ?? "", hash: "scrypt$stale") : nil
                return try await repository.start(
                    SessionStart(
                        tenantId: tenant, uid: user.uid, sessionId: "batch-session-\(index)", tokenHash: Array(repeating: 1, count: 32),
                        signInProvider: "password", now: now, provenPassword: proven))
            }
            for index in 0..<30 {
                let started = try #require(outcomes[index].value, "request \(index): \(String(describing: outcomes[index].code))")
                #expect(started != nil, "request \(index) got a session")
                #expect((started ?? now) >= now)
            }
            #expect(outcomes[30].value == .some(nil), "a disabled user gets no session")
            #expect(outcomes[31].value == .some(nil), "a password that is not the stored one gets no session")
            #expect(try await harness.count("SELECT count(*) FROM refresh_sessions WHERE session_id LIKE 'batch-session-%'") == 30)
        }
    }

    @Test("a user whose row is held keeps its own sign-ins waiting, never another user's: no batch waits on it for them")
    func heldUserHoldsOnlyItsOwnStarts() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let held = try await harness.signUp("held@example.com", tenant: tenant).user
            let other = try await harness.signUp("other@example.com", tenant: tenant).user
            let repository = RefreshSessionRepository(database: harness.database, logger: TestDatabase.logger, concurrentBatches: 2)
            let now = harness.clock.now()
            func start(_ user: User, _ index: Int) async throws -> Timestamp? {
                try await repository.start(
                    SessionStart(
                        tenantId: tenant, uid: user.uid, sessionId: "held-session-\(index)", tokenHash: Array(repeating: 1, count: 32),
                        signInProvider: "password", now: now))
            }
            // Another transaction holds the user's row (as a revocation or another instance's sign-in would).
            let (locked, lock) = AsyncStream<Void>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await harness.database.withTransaction { transaction in
                    try await transaction.query(
                        "SELECT 1 FROM users WHERE tenant_id = \(tenant) AND uid = \(held.uid) FOR UPDATE", logger: TestDatabase.logger)
                    lock.yield()
                    for await _ in released { break }
                }
            }
            for await _ in locked { break }
            // Two sign-ins of the held user: before, they took both slots and waited on the row.
            let heldStarts = (0..<2).map { index in Task { try await start(held, index) } }
            try await Task.sleep(for: .milliseconds(200))
            let otherFinishedFirst = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask { try await start(other, 2) != nil }
                group.addTask {
                    try? await Task.sleep(for: .seconds(3))
                    return false
                }
                let first = try await group.next()
                release.yield()
                group.cancelAll()
                try await group.waitForAll()
                return first
            }
            #expect(otherFinishedFirst == true, "the other user's sign-in waited for the held row")
            release.yield()
            try await holder.value
            for task in heldStarts { #expect(try await task.value != nil) }
            #expect(try await harness.count("SELECT count(*) FROM refresh_sessions WHERE session_id LIKE 'held-session-%'") == 3)
        }
    }
}
