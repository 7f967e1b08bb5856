import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("Retention sweeper")
struct RetentionSweeperTests {
    static func sweeper(_ database: Database, retention: Duration = .seconds(30 * 86_400), batchSize: Int) -> RetentionSweeper {
        RetentionSweeper(
            sessions: RefreshSessionRepository(database: database, logger: TestDatabase.logger),
            actionCodes: ActionCodeRepository(database: database, logger: TestDatabase.logger),
            outbox: EmailOutboxRepository(database: database, logger: TestDatabase.logger), retention: retention,
            batchSize: batchSize, clock: SystemClock(), schema: SchemaGate(), logger: TestDatabase.logger)
    }

    @Test("revoked sessions and sessions before validSince go once past the retention; live and recent ones stay")
    func sweepsOnlyDeadSessionsPastRetention() async throws {
        try await TestGateway.run { gateway in
            let database = gateway.server.database
            let tenant = try await gateway.createTenant(#"{"displayName":"sweep","allowPasswordSignup":true}"#)
            let revokedOld = try await gateway.signUp("alice@example.com", tenant: tenant)
            let live = try await gateway.signIn("alice@example.com", tenant: tenant)
            let revokedRecent = try await gateway.signIn("alice@example.com", tenant: tenant)
            let beforeValidSince = try await gateway.signUp("bob@example.com", tenant: tenant)
            func id(_ session: Session) -> String { String(session.refreshToken.split(separator: ".")[2]) }
            func run(_ query: PostgresQuery) async throws {
                for try await _ in try await database.pool().client.query(query) {}
            }

            // 40 days ago for everything but one of Alice's sessions; then the states to sweep.
            let past: Int64 = 40 * 86_400
            try await run("UPDATE users SET valid_since_us = valid_since_us - \(past * 1_000_000) WHERE tenant_id = \(tenant)")
            try await run(
                "UPDATE refresh_sessions SET issued_at = issued_at - \(past) WHERE tenant_id = \(tenant) AND session_id <> \(id(revokedRecent))"
            )
            try await run(
                "UPDATE refresh_sessions SET revoked = true WHERE tenant_id = \(tenant) AND session_id IN (\(id(revokedOld)), \(id(revokedRecent)))"
            )
            try await run(
                "UPDATE users SET valid_since_us = (extract(epoch FROM now()) * 1000000)::int8 WHERE tenant_id = \(tenant) AND uid = \(beforeValidSince.uid)"
            )

            // A batch of one, so the pass has to loop.
            let sweeper = Self.sweeper(database, batchSize: 1)
            #expect(await sweeper.sweep(now: SystemClock().now()) == .init(sessions: 2))

            var remaining: Set<String> = []
            let rows = try await database.pool().client.query("SELECT session_id FROM refresh_sessions WHERE tenant_id = \(tenant)")
            for try await sessionId in rows.decode(String.self) { remaining.insert(sessionId) }
            #expect(remaining == [id(live), id(revokedRecent)])
            #expect(try await gateway.refresh(live.refreshToken).status == .ok)
            // A swept session's token is simply unknown now.
            try await gateway.refresh(revokedOld.refreshToken).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            #expect(await sweeper.sweep(now: SystemClock().now()) == .init())
        }
    }

    @Test(
        "used codes and finished messages go one retention after, expired codes one retention after expiry; waiting messages and the flood window stay; two sweepers delete each row once"
    )
    func sweepsSpentCodesAndFinishedMessages() async throws {
        try await EmailActionFixture.run { fixture in
            let database = fixture.gateway.server.database
            func count(_ query: PostgresQuery) async throws -> Int64 {
                var value: Int64 = -1
                for try await row in try await database.pool().client.query(query).decode(Int64.self) { value = row }
                return value
            }
            let tenant = fixture.tenant
            let session = try await fixture.gateway.signUp("ada@example.com", tenant: tenant)
            // A code delivered by the webhook, never used.
            #expect(try await fixture.send(["requestType": "VERIFY_EMAIL", "idToken": .string(session.idToken)]).status == .ok)
            _ = try await fixture.receiver.waitForDeliveries(1)
            let outbox = EmailOutboxRepository(database: database, logger: TestDatabase.logger)
            #expect(try await eventually { try await outbox.messages(tenant: TenantScope(tenant)).allSatisfy(\.delivered) } != nil)
            // An admin's link, never used, and one used.
            _ = try await fixture.adminCode("PASSWORD_RESET", email: "ada@example.com")
            let used = try await fixture.adminCode("VERIFY_EMAIL", email: "ada@example.com")
            #expect(try await fixture.gateway.endUser("accounts:update", ["oobCode": .string(used)], tenant: tenant).status == .ok)
            // A message still waiting for its next attempt.
            for try await _ in try await database.pool().client.query(
                """
                INSERT INTO email_outbox (tenant_id, kind, uid, recipient, next_attempt_at)
                VALUES (\(tenant), 'VERIFY_EMAIL', \(session.uid), 'ada@example.com', now() + interval '1 day')
                """)
            {}
            let start = SystemClock().now()
            let codes = "SELECT count(*) FROM action_codes WHERE tenant_id = \(tenant)" as PostgresQuery
            let messages = "SELECT count(*) FROM email_outbox WHERE tenant_id = \(tenant)" as PostgresQuery
            #expect(try await count(codes) == 3)
            #expect(try await count(messages) == 2)

            // Spent before the cutoff, but issued within the hour the flood limit counts.
            let actionCodes = ActionCodeRepository(database: database, logger: TestDatabase.logger)
            let soon = start.adding(seconds: 60)
            #expect(try await actionCodes.deleteSpentCodes(before: soon, now: soon, limit: 10) == 0)

            let sweepers = [Self.sweeper(database, batchSize: 1), Self.sweeper(database, batchSize: 1)]
            func sweepTogether(at now: Timestamp) async -> RetentionSweeper.Swept {
                async let first = sweepers[0].sweep(now: now)
                async let second = sweepers[1].sweep(now: now)
                let (a, b) = await (first, second)
                return .init(
                    sessions: a.sessions + b.sessions, actionCodes: a.actionCodes + b.actionCodes, messages: a.messages + b.messages)
            }
            let retention: Int64 = 30 * 86_400
            #expect(await sweepTogether(at: start) == .init())
            #expect(await sweepTogether(at: start.adding(seconds: retention - 60)) == .init())
            // The used code and the delivered message; the expired codes are kept a retention past expiry.
            #expect(await sweepTogether(at: start.adding(seconds: retention + 60)) == .init(actionCodes: 1, messages: 1))
            #expect(try await count(codes) == 2)
            try await fixture.gateway.endUser("accounts:update", ["oobCode": .string(used)], tenant: tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            // Codes live for an hour (the tenant's default): both go a retention after.
            #expect(await sweepTogether(at: start.adding(seconds: retention + 3600 + 120)) == .init(actionCodes: 2))
            #expect(try await count(codes) == 0)
            // The waiting message stays, however late.
            #expect(await sweepTogether(at: start.adding(seconds: 10 * retention)) == .init())
            #expect(try await count(messages) == 1)
        }
    }
}
