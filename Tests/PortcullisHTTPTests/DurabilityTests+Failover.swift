import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

/// DESIGN.md §4–§6, issue 31: the gateway follows its database through a failover and a
/// restart: every acknowledged write survives, and no answer waits past the timeout + 1 s.
extension DurabilityTests {
    /// Anonymous sign-ups and refresh chains from 6 workers until `end`; what was acknowledged
    /// goes to `ledger`. Anonymous: no password hash in the way, so an answer's time is the
    /// database's and the gateway's (the hashing pool's scheduling is measured elsewhere).
    static func load(_ gateway: TestGateway, tenant: String, ledger: Ledger, until end: ContinuousClock.Instant) async throws {
        let clock = ContinuousClock()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    var step = 0
                    var chain: String?
                    while clock.now < end {
                        step += 1
                        let start = clock.now
                        if let token = chain, step % 2 == 0 {
                            let answer = try await gateway.refresh(token)
                            await ledger.record(answer.status.code, clock.now - start, "refresh")
                            if answer.status == .ok, case .string(let next)? = try answer.json().value(at: ["refresh_token"]) {
                                chain = next
                            }
                        } else {
                            let answer = try await gateway.endUser("accounts:signUp", [:], tenant: tenant)
                            await ledger.record(answer.status.code, clock.now - start, "sign-up")
                            let body = answer.status == .ok ? try answer.json() : .null
                            if case .string(let uid)? = body.value(at: ["localId"]),
                                case .string(let token)? = body.value(at: ["refreshToken"])
                            {
                                await ledger.acknowledgeAnonymous(uid, refreshToken: chain == nil ? nil : token)
                                chain = chain ?? token
                            }
                        }
                        if step % 8 == 0 { try await Task.sleep(for: .milliseconds(20)) }
                    }
                    if let chain { await ledger.acknowledgeSession(chain) }
                }
            }
            try await group.waitForAll()
        }
    }

    /// A tenant for ``load(_:tenant:ledger:until:)``, its signing key made: a new tenant's first
    /// requests make it (an RSA key is up to a second of CPU), which is not what these tests time.
    static func loadTenant(_ gateway: TestGateway) async throws -> String {
        let tenant = try await gateway.createTenant(#"{"enableAnonymousUser":true}"#)
        let first = try await gateway.endUser("accounts:signUp", [:], tenant: tenant)
        guard first.status == .ok else { throw TestSetupError("the tenant's first sign-up failed: \(String(buffer: first.body))") }
        return tenant
    }

    /// A gateway on `settings` with a project admin key, through the router.
    static func withGateway(
        _ settings: DatabaseSettings, timeout: Duration, _ body: @Sendable (TestGateway) async throws -> Void
    ) async throws {
        let server = try TestGateway.make(settings: settings) { $0.database.requestTimeout = timeout }
        try await server.application.test(.router) { client in
            let (_, secret) = try await server.services.adminKeys.create(displayName: "test", scope: .project, actor: "test")
            try await body(TestGateway(server: server, client: client, projectKey: secret))
        }
    }

    @Test(
        "the primary crashes under load and its synchronous standby is promoted: the gateway on a two-host URL follows, losing nothing acknowledged"
    )
    func failover() async throws {
        let timeout = Duration.seconds(2)
        try await PrivatePostgreSQL.runReplicated { primary, standby in
            var settings = primary.settings
            settings.endpoints = [primary.endpoint, standby.endpoint]
            try await Self.withGateway(settings, timeout: timeout) { gateway in
                let tenant = try await Self.loadTenant(gateway)
                let ledger = Ledger()
                let clock = ContinuousClock()
                let end = clock.now + .seconds(7)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await Task.sleep(for: .seconds(1))
                        try await primary.crash()
                        try await standby.promote()
                    }
                    group.addTask { try await Self.load(gateway, tenant: tenant, ledger: ledger, until: end) }
                    try await group.waitForAll()
                }
                // The database now writes through the promoted standby.
                #expect(try await gateway.server.database.pool().endpoint == standby.endpoint)
                try await ledger.expectSurvived("failover", timeout: timeout, through: gateway, tenant: tenant)
            }
        }
    }

    @Test("PostgreSQL stopped for 5 s under load: no 500, no answer past the timeout + 1 s, writes back within 1 s of its return")
    func restart() async throws {
        let timeout = Duration.seconds(2)
        try await PrivatePostgreSQL.run { cluster in
            try await Self.withGateway(cluster.settings, timeout: timeout) { gateway in
                let tenant = try await Self.loadTenant(gateway)
                let ledger = Ledger()
                let clock = ContinuousClock()
                let end = clock.now + .seconds(9)
                let restarted = try await withThrowingTaskGroup(of: ContinuousClock.Instant?.self) { group in
                    group.addTask {
                        try await Task.sleep(for: .seconds(1))
                        try await cluster.stop()
                        try await Task.sleep(for: .seconds(5))
                        try await cluster.start()
                        return clock.now
                    }
                    group.addTask {
                        try await Self.load(gateway, tenant: tenant, ledger: ledger, until: end)
                        return nil
                    }
                    var restarted: ContinuousClock.Instant?
                    for try await instant in group { restarted = restarted ?? instant }
                    return restarted
                }
                let back = try #require(restarted)
                let firstWrite = try #require(await ledger.firstSuccess(after: back), "no write succeeded after the restart")
                #expect(firstWrite - back <= .seconds(1), "writes came back \(firstWrite - back) after PostgreSQL accepted connections")
                // The outage is on record, whole (the refresh tokens' grace window does not count it).
                let outages = gateway.server.database.outages
                #expect((5...10).contains(outages.reduce(0) { $0 + $1.count }), "outages recorded: \(outages)")
                try await ledger.expectSurvived("outage", timeout: timeout, through: gateway, tenant: tenant)
            }
        }
    }
}
