import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisHTTP

@Suite("A lost database")
struct DatabaseOutageTests {
    @Test("while the listener's connection is lost, requests get 503 without waiting for the pool; the gate reopens by itself")
    func failsFastAndRecovers() async throws {
        try await TestGateway.run { gateway in
            let database = gateway.server.database
            let tenant = try await gateway.createTenant(#"{"displayName":"outage","allowPasswordSignup":true}"#)
            // The listener's connection is the canary; wait until it is LISTENing.
            func listeners() async throws -> Int {
                let rows = try await database.pool().client.query(
                    "SELECT count(*)::int8 FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'")
                var count: Int64 = 0
                for try await (value) in rows.decode(Int64.self) { count = value }
                return Int(count)
            }
            #expect(try await eventually { try await listeners() == 1 } != nil)
            _ = try await gateway.signUp("before@example.com", tenant: tenant)

            // What the listener records when its connection drops. PostgreSQL is in fact up, so
            // a 503 here can only come from the gate, never from waiting on the pool.
            database.setReachable(false)
            let refused = try await gateway.endUser(
                "accounts:signUp", ["email": .string("during@example.com"), "password": .string("correct horse")], tenant: tenant)
            refused.expectEnvelope(.serviceUnavailable, "UNAVAILABLE")
            #expect(try await gateway.send(.get, "/readyz").status == .serviceUnavailable)

            // Drop the listener's connection for real: it reconnects and reopens the gate.
            let terminated = try await database.pool().client.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'")
            for try await (done) in terminated.decode(Bool.self) { #expect(done) }
            #expect(try await eventually { database.isReachable } != nil)
            // The terminated backend may linger in pg_stat_activity for a moment on a loaded machine.
            #expect(try await eventually { try await listeners() == 1 } != nil)
            _ = try await gateway.signUp("after@example.com", tenant: tenant)
            #expect(try await gateway.send(.get, "/readyz").status == .ok)
        }
    }

    @Test("a failing user query is never answered as \"no such user\": admin lookup reports the failure")
    func lookupFailureIsNotEmpty() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"gone","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("present@example.com", tenant: tenant)
            let lookup = "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:lookup"
            // A value PostgreSQL refuses (a NUL byte in text) is the caller's mistake: 400, not an empty answer.
            try await gateway.send(.post, lookup, json: #"{"localId":["a\u0000b"]}"#).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            // The users table gone (a broken deployment) is a fault: 5xx, not "no users".
            _ = try await gateway.server.database.withConnection { connection in
                try await connection.query("ALTER TABLE users RENAME TO users_elsewhere", logger: TestDatabase.logger)
            }
            let failed = try await gateway.send(.post, lookup, json: #"{"localId":["\#(session.uid)"]}"#)
            #expect(failed.status.code >= 500, "\(String(buffer: failed.body))")
            #expect(failed.errorMessage != nil)
        }
    }
}

@Suite("Forward auth through a database outage")
struct ForwardAuthOutageTests {
    @Test("PostgreSQL stopped: cached tenants' tokens still verify; checkRevoked and an instance without the keys answer 503, never 401")
    func verifiesFromCache() async throws {
        try await PrivatePostgreSQL.run { cluster in
            // A periodic full flush every second: the outage outlasts several of them.
            let server = try TestGateway.make(settings: cluster.settings) { $0.cacheRefreshInterval = .seconds(1) }
            let fresh = try TestGateway.make(settings: cluster.settings)
            // A second instance, started before the outage, that never needs the tenant's keys before it.
            try await fresh.application.test(.router) { freshClient in
                try await server.application.test(.router) { client in
                    let (_, secret) = try await server.services.adminKeys.create(displayName: "test", scope: .project, actor: "test")
                    let gateway = TestGateway(server: server, client: client, projectKey: secret)
                    let tenant = try await gateway.createTenant(#"{"displayName":"outage","allowPasswordSignup":true}"#)
                    let seen = try await gateway.signUp("seen@example.com", tenant: tenant)
                    // Never presented to /v1/verify before the outage: its signature is checked during it.
                    let unseen = try await gateway.signUp("unseen@example.com", tenant: tenant)
                    try await gateway.send(
                        .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup",
                        json: #"{"allowPasswordSignup":true}"#)
                    let project = try await gateway.signUp("project@example.com")
                    @Sendable func verify(
                        _ token: String, _ query: String = "", on client: some TestClientProtocol
                    ) async throws -> TestResponse {
                        try await client.execute(uri: "/v1/verify\(query)", method: .get, headers: [.authorization: "Bearer \(token)"])
                    }
                    #expect(try await verify(seen.idToken, on: client).status == .ok)
                    #expect(try await verify(project.idToken, "?checkRevoked=true", on: client).status == .ok)
                    // The first keys' NOTIFY echoes drop the keyrings this instance has already
                    // reloaded after its own commits: let them arrive, then read everything once
                    // more, as a serving instance would have by the time an outage starts (`unseen`
                    // stays unseen: the tenant's keyring is reloaded by `seen`).
                    try await Task.sleep(for: .milliseconds(300))
                    for token in [seen.idToken, project.idToken] {
                        #expect(try await verify(token, on: client).status == .ok)
                    }

                    try await cluster.stop()
                    #expect(try await eventually { !server.database.isReachable && !fresh.database.isReachable } != nil)
                    try await Task.sleep(for: .milliseconds(2500))

                    for token in [seen.idToken, unseen.idToken, project.idToken] {
                        let answer = try await verify(token, on: client)
                        #expect(answer.status == .ok, "\(String(buffer: answer.body))")
                        #expect(answer.headers[VerifyRoutes.userId] != nil)
                    }
                    #expect(try await verify(unseen.idToken, on: client).headers[VerifyRoutes.tenantId] == tenant)
                    // What the gateway can still decide without the database, it decides.
                    #expect(try await verify(seen.idToken + "x", on: client).status == .unauthorized)
                    // What it cannot is 503, even for a user whose revocation state it had read.
                    try await verify(project.idToken, "?checkRevoked=true", on: client).expectEnvelope(.serviceUnavailable, "UNAVAILABLE")
                    try await verify(seen.idToken, on: freshClient).expectEnvelope(.serviceUnavailable, "UNAVAILABLE")

                    try await cluster.start()
                    #expect(try await eventually { server.database.isReachable } != nil)
                    #expect(try await verify(seen.idToken, "?checkRevoked=true", on: client).status == .ok)
                }
            }
        }
    }
}
