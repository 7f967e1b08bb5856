import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

/// DESIGN.md §6: a 2xx is sent only after its write has committed. A transaction that
/// fails at its commit (here a deferred constraint trigger refuses it; a backend killed
/// between a statement's completion and its commit is the same to the client) must never
/// be acknowledged: every write is answered only once the server confirmed its commit, an
/// explicit transaction's `COMMIT` or, for the batched refreshes and session starts (one
/// statement each, a transaction of its own), the next query on the connection.
@Suite("Durability: nothing acknowledged is lost")
struct DurabilityTests {
    /// Makes every commit that wrote a row of `table` for `tenant` fail, as late as possible:
    /// after the statement completed, at the commit itself.
    static func refuseCommits(_ database: Database, table: String, tenant: String, on events: String) async throws {
        let name = "refuse_\(table)"
        try await database.withConnection { connection in
            try await connection.query(
                """
                CREATE OR REPLACE FUNCTION portcullis_test_refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'commit refused by the test' USING ERRCODE = '40001'; END $$
                """, logger: TestDatabase.logger)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE CONSTRAINT TRIGGER \(name) AFTER \(events) ON \(table) DEFERRABLE INITIALLY DEFERRED
                        FOR EACH ROW WHEN (NEW.tenant_id = '\(tenant)') EXECUTE FUNCTION portcullis_test_refuse_commit()
                        """), logger: TestDatabase.logger)
        }
    }

    /// Well inside the tests' `database.request_timeout` (30 s): a refused commit is answered
    /// when it is refused, not when the request's deadline gives up on a confirmation.
    static let atOnce = Duration.seconds(10)

    static func allowCommits(_ database: Database, table: String) async throws {
        _ = try await database.withConnection { connection in
            try await connection.query(
                PostgresQuery(unsafeSQL: "DROP TRIGGER refuse_\(table) ON \(table)"), logger: TestDatabase.logger)
        }
    }

    @Test("a refresh whose rotation fails at commit is not acknowledged; the presented token stays the current one")
    func refreshCommit() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("durable@example.com", tenant: tenant)
            try await Self.refuseCommits(gateway.server.database, table: "refresh_sessions", tenant: tenant, on: "UPDATE")
            let asked = ContinuousClock.now
            let refused = try await gateway.refresh(session.refreshToken)
            #expect(refused.status != .ok, "\(String(buffer: refused.body))")
            #expect(ContinuousClock.now - asked < Self.atOnce, "answered only at its deadline")
            try await Self.allowCommits(gateway.server.database, table: "refresh_sessions")
            // Nothing was rotated: the token the client still holds is the current one.
            let retried = try await gateway.refresh(session.refreshToken)
            #expect(retried.status == .ok, "\(String(buffer: retried.body))")
        }
    }

    @Test("a sign-in whose session fails at commit is not acknowledged")
    func signInCommit() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("signin@example.com", tenant: tenant)
            try await Self.refuseCommits(gateway.server.database, table: "refresh_sessions", tenant: tenant, on: "INSERT")
            let asked = ContinuousClock.now
            let refused = try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "signin@example.com", "password": "correct horse"], tenant: tenant)
            #expect(refused.status != .ok, "\(String(buffer: refused.body))")
            #expect(ContinuousClock.now - asked < Self.atOnce, "answered only at its deadline")
            if refused.status == .ok, case .string(let token)? = try refused.json().value(at: ["refreshToken"]) {
                // Acknowledged: the session must exist.
                try await Self.allowCommits(gateway.server.database, table: "refresh_sessions")
                #expect(try await gateway.refresh(token).status == .ok)
            }
        }
    }

    @Test("a sign-up is its user and its first session in one transaction: when the session fails, no user is left")
    func signUpCommit() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true,"enableAnonymousUser":true}"#)
            try await Self.refuseCommits(gateway.server.database, table: "refresh_sessions", tenant: tenant, on: "INSERT")
            let refused = try await gateway.endUser(
                "accounts:signUp", ["email": "once@example.com", "password": "correct horse"], tenant: tenant)
            #expect(refused.status != .ok, "\(String(buffer: refused.body))")
            let guest = try await gateway.endUser("accounts:signUp", [:], tenant: tenant)
            #expect(guest.status != .ok, "\(String(buffer: guest.body))")
            try await Self.allowCommits(gateway.server.database, table: "refresh_sessions")
            // The client's retry signs up: the first attempt left no account behind (no EMAIL_EXISTS).
            let retried = try await gateway.endUser(
                "accounts:signUp", ["email": "once@example.com", "password": "correct horse"], tenant: tenant)
            #expect(retried.status == .ok, "\(String(buffer: retried.body))")
            let users = try await gateway.server.database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT count(*) FROM users WHERE tenant_id = \(tenant)", logger: TestDatabase.logger)
                var count: Int64 = -1
                for try await value in rows.decode(Int64.self) { count = value }
                return count
            }
            #expect(users == 1)
        }
    }

    /// What the load saw: every answer's status and time, and what was acknowledged.
    actor Ledger {
        var statuses: [Int: Int] = [:]
        var slowest: Duration = .zero
        var signedUp: [String] = []
        /// Anonymous accounts acknowledged, by uid.
        var anonymous: [String] = []
        var sessions: [String] = []
        /// When each successful answer came.
        var successes: [ContinuousClock.Instant] = []

        /// What the slowest answer was for, for the failure message.
        var slowestRequest = ""

        func record(_ status: Int, _ elapsed: Duration, _ request: String) {
            statuses[status, default: 0] += 1
            if elapsed > slowest { (slowest, slowestRequest) = (elapsed, "\(request), \(status)") }
            if status == 200 { successes.append(.now) }
        }

        /// The first successful answer after `instant`.
        func firstSuccess(after instant: ContinuousClock.Instant) -> ContinuousClock.Instant? {
            successes.filter { $0 > instant }.min()
        }

        /// A sign-up answered 200; its session is checked too unless the load goes on using it.
        func acknowledgeSignUp(_ email: String, refreshToken: String?) {
            signedUp.append(email)
            if let refreshToken { sessions.append(refreshToken) }
        }

        /// An anonymous sign-up answered 200; its session is checked too unless the load goes on using it.
        func acknowledgeAnonymous(_ uid: String, refreshToken: String?) {
            anonymous.append(uid)
            if let refreshToken { sessions.append(refreshToken) }
        }

        func acknowledgeSession(_ refreshToken: String) { sessions.append(refreshToken) }

        /// What every fault test expects: only 200s and 503s, the `fault` biting, no answer
        /// past the timeout + 1 s, and every acknowledged write stored (``expectStored(through:tenant:)``).
        func expectSurvived(_ fault: String, timeout: Duration, through gateway: TestGateway, tenant: String) async throws {
            #expect(Set(statuses.keys).isSubset(of: [200, 503]), "\(statuses)")
            #expect((statuses[503] ?? 0) > 0, "the \(fault) must bite: \(statuses)")
            #expect(slowest <= timeout + .seconds(1), "slowest answer \(slowest) (\(slowestRequest))")
            try await expectStored(through: gateway, tenant: tenant)
        }

        /// Once the database is back: every acknowledged account exists, and every
        /// acknowledged refresh token is its session's current one (it refreshes).
        func expectStored(through gateway: TestGateway, tenant: String) async throws {
            let database = gateway.server.database
            #expect(try await eventually { database.isReachable } != nil)
            let (emails, uids) = (signedUp, anonymous)
            let stored = try await database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT count(*) FROM users WHERE tenant_id = \(tenant) AND (email = ANY(\(emails)) OR uid = ANY(\(uids)))",
                    logger: TestDatabase.logger)
                var count: Int64 = -1
                for try await value in rows.decode(Int64.self) { count = value }
                return count
            }
            let acknowledged = emails.count + uids.count
            #expect(stored == Int64(acknowledged), "\(acknowledged) sign-ups acknowledged, \(stored) stored")
            for token in sessions {
                var answer = try await gateway.refresh(token)
                for _ in 0..<20 where answer.status == .serviceUnavailable {
                    try await Task.sleep(for: .milliseconds(100))
                    answer = try await gateway.refresh(token)
                }
                #expect(answer.status == .ok, "an acknowledged token no longer refreshes: \(String(buffer: answer.body))")
            }
        }
    }

    @Test("backends killed again and again under load: every acknowledged write is stored, and every answer comes in time")
    func killedBackends() async throws {
        let timeout = Duration.seconds(2)
        try await TestGateway.run(configure: { $0.database.requestTimeout = timeout }) { gateway in
            let tenant = try await gateway.createTenant(
                #"{"allowPasswordSignup":true,"scryptParameters":{"logN":10,"r":1,"p":1}}"#)
            var seeded: [String] = []
            for index in 0..<8 { seeded.append(try await gateway.signUp("seed\(index)@example.com", tenant: tenant).refreshToken) }
            let seeds = seeded
            let ledger = Ledger()
            let clock = ContinuousClock()
            let end = clock.now + .seconds(6)
            // A pool of its own, on the cluster's maintenance database: it kills every other backend of the test's database.
            var killerSettings = try TestDatabase.serverSettings
            killerSettings.maximumConnections = 1
            let killer = Database(settings: killerSettings, logger: TestDatabase.logger)
            let target = gateway.server.database.settings.database
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await killer.run() }
                group.addTask {
                    while clock.now < end {
                        _ = try? await killer.withConnection { connection in
                            try await connection.query(
                                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(target) AND pid <> pg_backend_pid()",
                                logger: TestDatabase.logger)
                        }
                        try await Task.sleep(for: .milliseconds(Int64.random(in: 50...300)))
                    }
                }
                for worker in 0..<8 {
                    group.addTask {
                        var chain = seeds[worker]
                        var step = 0
                        while clock.now < end {
                            step += 1
                            let start = clock.now
                            switch step % 3 {
                            case 0:
                                let email = "load-\(worker)-\(step)@example.com"
                                let answer = try await gateway.endUser(
                                    "accounts:signUp", ["email": .string(email), "password": "correct horse"], tenant: tenant)
                                await ledger.record(answer.status.code, clock.now - start, "sign-up")
                                if answer.status == .ok, case .string(let token)? = try answer.json().value(at: ["refreshToken"]) {
                                    await ledger.acknowledgeSignUp(email, refreshToken: token)
                                }
                            case 1:
                                let answer = try await gateway.refresh(chain)
                                await ledger.record(answer.status.code, clock.now - start, "refresh")
                                if answer.status == .ok, case .string(let token)? = try answer.json().value(at: ["refresh_token"]) {
                                    chain = token
                                }
                            default:
                                let answer = try await gateway.endUser(
                                    "accounts:signInWithPassword",
                                    ["email": .string("seed\(worker)@example.com"), "password": "correct horse"],
                                    tenant: tenant)
                                await ledger.record(answer.status.code, clock.now - start, "sign-in")
                                if answer.status == .ok, case .string(let token)? = try answer.json().value(at: ["refreshToken"]) {
                                    await ledger.acknowledgeSession(token)
                                }
                            }
                        }
                        await ledger.acknowledgeSession(chain)
                    }
                }
                for _ in 0..<9 { try await group.next() }
                group.cancelAll()
            }
            let statuses = await ledger.statuses
            #expect(Set(statuses.keys).isSubset(of: [200, 503]), "\(statuses)")
            #expect((statuses[200] ?? 0) > 0 && (statuses[503] ?? 0) > 0, "the faults must bite: \(statuses)")
            let slowest = await ledger.slowest
            #expect(slowest <= timeout + .seconds(1), "slowest answer \(slowest)")

            try await ledger.expectStored(through: gateway, tenant: tenant)
        }
    }

    @Test("PostgreSQL crashed (pg_ctl stop -m immediate) under load and started again: nothing acknowledged is lost")
    func crashedServer() async throws {
        let timeout = Duration.seconds(2)
        try await PrivatePostgreSQL.run { cluster in
            try await Self.withGateway(cluster.settings, timeout: timeout) { gateway in
                let tenant = try await Self.loadTenant(gateway)
                let ledger = Ledger()
                let end = ContinuousClock.now + .seconds(5)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await Task.sleep(for: .seconds(1))
                        try await cluster.crash()
                        try await Task.sleep(for: .milliseconds(500))
                        try await cluster.start()
                    }
                    group.addTask { try await Self.load(gateway, tenant: tenant, ledger: ledger, until: end) }
                    try await group.waitForAll()
                }
                try await ledger.expectSurvived("crash", timeout: timeout, through: gateway, tenant: tenant)
            }
        }
    }
}
