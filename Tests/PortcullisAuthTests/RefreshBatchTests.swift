import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// Concurrent refreshes share one statement (``RefreshSessionRepository``'s batcher): each
/// request must still get its own session's answer, whatever else rode in its batch.
@Suite("Batched refresh rotation")
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
                database: harness.database, logger: TestDatabase.logger, concurrentRotations: 1)
            let key = RefreshTokenKey(masterKey: AuthHarness.masterKey)
            harness.clock.advance(seconds: 1)
            let now = harness.clock.now().seconds
            // Requests 0–39 rotate sessions 0–39; 40 presents session 0's token again; 41 presents
            // session 40's with a wrong secret (which ends that session, as any unknown token of it would).
            let all = sessions
            let outcomes = try await race(42) { index in
                let session = all[index == 40 ? 0 : index == 41 ? 40 : index]
                let presented = index == 41 ? [UInt8](repeating: 7, count: 32) : session.token.secretHash
                return try await repository.rotate(
                    tenantId: session.tenant, sessionId: session.token.sessionId, presentedHash: presented,
                    successorHash: session.token.successor(using: key).secretHash, now: now, graceSeconds: 10
                ).user
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
