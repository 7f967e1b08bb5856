import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("User import")
struct UserImportTests {
    static func batchCreate(_ gateway: TestGateway, tenant: String, _ body: JSONValue, key: String?? = .none) async throws -> TestResponse {
        try await gateway.send(
            .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:batchCreate", json: body.serialized(), key: key)
    }

    static func storedHash(_ gateway: TestGateway, tenant: String, email: String) async throws -> String? {
        try await gateway.server.database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT password_hash FROM users WHERE tenant_id = \(tenant) AND email = \(email)", logger: TestDatabase.logger)
            for try await hash in rows.decode(String?.self) { return hash }
            return nil
        }
    }

    @Test("users imported with hashes made by an independent implementation sign in with their passwords and are rehashed")
    func everyAlgorithm() async throws {
        let python = try InteropTests.tool("PORTCULLIS_TEST_PYTHON")
        let script = InteropTests.packageRoot.appendingPathComponent("Tests/interop/make_password_hashes.py").path
        let (status, output) = try await ChildProcess.run(python, [script])
        #expect(status == 0, "\(output)")
        guard case .array(let vectors) = try JSONValue.parse(Array(output.utf8)) else { throw TestSetupError(output) }
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            for (index, vector) in vectors.enumerated() {
                guard case .object(var request) = vector, case .string(let password)? = request["password"],
                    let hash = request["passwordHash"], let salt = request["salt"]
                else { throw TestSetupError("bad vector \(vector)") }
                let email = "imported\(index)@example.com"
                request["users"] = .array([
                    .object([
                        "localId": .string("imported-\(index)"), "email": .string(email), "passwordHash": hash, "salt": salt,
                        "emailVerified": true, "createdAt": "1600000000000", "displayName": "Imported",
                    ])
                ])
                let answer = try await Self.batchCreate(gateway, tenant: tenant, .object(request))
                #expect(answer.status == .ok, "\(request["name"] ?? .null): \(String(buffer: answer.body))")
                #expect(try answer.json().value(at: ["error"]) == nil, "\(String(buffer: answer.body))")
                try await gateway.endUser(
                    "accounts:signInWithPassword", ["email": .string(email), "password": .string(password + "x")], tenant: tenant
                ).expectEnvelope(.badRequest, "INVALID_PASSWORD")
                let session = try await gateway.signIn(email, password, tenant: tenant)
                #expect(session.uid == "imported-\(index)")
                let stored = try await Self.storedHash(gateway, tenant: tenant, email: email)
                #expect(stored?.hasPrefix("$scrypt$") == true, "\(request["name"] ?? .null) not rehashed")
            }
        }
    }

    @Test("a batch: refused users are reported by index and left out whole; the others are imported")
    func perUserErrors() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("existing@example.com", tenant: tenant)
            let users: [JSONValue] = [
                .object(["localId": "ok-1", "email": "ok1@example.com", "customAttributes": #"{"role":"admin"}"#]),
                .object(["localId": "bad-email", "email": "not an email"]),
                .object(["localId": "ok-1", "email": "dup-uid@example.com"]),
                .object(["localId": "taken-email", "email": "Existing@example.com"]),
                .object([
                    "localId": "google-user", "email": "g@example.com",
                    "providerUserInfo": .array([.object(["providerId": "google.com", "rawId": "g-123", "email": "g@example.com"])]),
                ]),
                .object(["localId": "claims", "customAttributes": #"{"sub":"x"}"#]),
                .object(["localId": "same-google", "providerUserInfo": .array([.object(["providerId": "google.com", "rawId": "g-123"])])]),
                .object(["localId": .string(String(repeating: "x", count: 129))]),
                .object(["localId": "phone", "phoneNumber": "+15555550100"]),
            ]
            let answer = try await Self.batchCreate(gateway, tenant: tenant, .object(["users": .array(users)]))
            #expect(answer.status == .ok, "\(String(buffer: answer.body))")
            guard case .array(let errors)? = try answer.json().value(at: ["error"]) else { throw TestSetupError("no errors") }
            var messages: [Int: String] = [:]
            for error in errors {
                if case .integer(let index)? = error.value(at: ["index"]), case .string(let message)? = error.value(at: ["message"]) {
                    messages[Int(index)] = message
                }
            }
            #expect(messages[1] == "INVALID_EMAIL")
            #expect(messages[2] == "DUPLICATE_LOCAL_ID")
            #expect(messages[3] == "EMAIL_EXISTS")
            #expect(messages[5] == "FORBIDDEN_CLAIM : sub")
            #expect(messages[6] == "FEDERATED_USER_ID_ALREADY_LINKED")
            #expect(messages[7] == "INVALID_LOCAL_ID")
            #expect(messages[8]?.hasPrefix("INVALID_ARGUMENT") == true)
            #expect(Set(messages.keys) == [1, 2, 3, 5, 6, 7, 8])
            let lookup = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:lookup",
                json: #"{"localId":["ok-1","google-user","bad-email","taken-email"]}"#)
            let body = String(buffer: lookup.body)
            #expect(body.contains("ok1@example.com") && body.contains("g-123") && body.contains("role"))
            #expect(!body.contains("bad-email") && !body.contains("taken-email"))
        }
    }

    @Test(
        "an import and its audit record are one transaction: the record counts imported and refused users; without it, nothing is imported")
    func auditedInTheSameTransaction() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let database = gateway.server.database
            func run(_ query: PostgresQuery) async throws {
                for try await _ in try await database.pool().client.query(query) {}
            }
            func texts(_ query: PostgresQuery) async throws -> [String] {
                var values: [String] = []
                for try await value in try await database.pool().client.query(query).decode(String.self) { values.append(value) }
                return values
            }
            let stored = "SELECT uid FROM users WHERE tenant_id = \(tenant) ORDER BY uid" as PostgresQuery
            let users: JSONValue = .array([
                .object(["localId": "a-1", "email": "a1@example.com"]), .object(["localId": "a-2", "email": "not an email"]),
                .object(["localId": "a-3"]),
            ])

            // The audit log refuses the import's record: the users must not be written either.
            try await run("ALTER TABLE audit_log ADD CONSTRAINT refuse_imports CHECK (action <> 'user.import') NOT VALID")
            let refused = try await Self.batchCreate(gateway, tenant: tenant, .object(["users": users]))
            #expect(refused.status != .ok, "\(String(buffer: refused.body))")
            #expect(refused.errorMessage != nil)
            #expect(try await texts(stored) == [])

            try await run("ALTER TABLE audit_log DROP CONSTRAINT refuse_imports")
            let answer = try await Self.batchCreate(gateway, tenant: tenant, .object(["users": users]))
            #expect(answer.status == .ok, "\(String(buffer: answer.body))")
            #expect(try await texts(stored) == ["a-1", "a-3"])
            let records = try await texts(
                "SELECT after::text FROM audit_log WHERE tenant_id = \(tenant) AND action = 'user.import'")
            #expect(records.count == 1)
            let record = try JSONValue.parse(Array((records.first ?? "").utf8))
            #expect(record.value(at: ["imported"]) == 2)
            #expect(record.value(at: ["failed"]) == 1)
        }
    }

    @Test("limits and scope: over 1,000 users, hashes without an algorithm, another tenant's key, an unknown tenant")
    func limits() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let many = JSONValue.array((0...1000).map { .object(["localId": .string("u\($0)")]) })
            try await Self.batchCreate(gateway, tenant: tenant, .object(["users": many])).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await Self.batchCreate(
                gateway, tenant: tenant, .object(["users": .array([.object(["localId": "h", "passwordHash": "AAAA"])])])
            ).expectEnvelope(.badRequest, "MISSING_HASH_ALGORITHM")
            try await Self.batchCreate(
                gateway, tenant: tenant,
                .object(["hashAlgorithm": "MD5", "users": .array([.object(["localId": "h", "passwordHash": "AAAA"])])])
            ).expectEnvelope(.badRequest, "INVALID_HASH_ALGORITHM")
            let other = try await gateway.createTenant()
            let otherKey = try await gateway.key(.tenant(other))
            try await Self.batchCreate(gateway, tenant: tenant, .object(["users": .array([.object(["localId": "x"])])]), key: otherKey)
                .expectEnvelope(.forbidden, "PERMISSION_DENIED")
            try await Self.batchCreate(gateway, tenant: "nope-00000", .object(["users": .array([.object(["localId": "x"])])]))
                .expectEnvelope(.notFound, "TENANT_NOT_FOUND")
        }
    }
}
