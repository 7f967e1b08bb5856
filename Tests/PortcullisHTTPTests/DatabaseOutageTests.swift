import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("A lost database")
struct DatabaseOutageTests {
    @Test("while the listener's connection is lost, requests get 503 without waiting for the pool; the gate reopens by itself")
    func failsFastAndRecovers() async throws {
        try await TestGateway.run { gateway in
            let database = gateway.server.database
            let tenant = try await gateway.createTenant(#"{"displayName":"outage","allowPasswordSignup":true}"#)
            // The listener's connection is the canary; wait until it is LISTENing.
            func listeners() async throws -> Int {
                let rows = try await database.client.query(
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
            let terminated = try await database.client.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'")
            for try await (done) in terminated.decode(Bool.self) { #expect(done) }
            #expect(try await eventually { database.isReachable } != nil)
            #expect(try await listeners() == 1)
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
