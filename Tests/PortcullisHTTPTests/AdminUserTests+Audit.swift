import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

/// The audit rows every admin change writes.
extension AdminUserTests {
    @Test("every admin change writes an audit row with the key, tenant and uid, and never a password or its hash")
    func audit() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let key = try await gateway.key(.tenant(tenant))
            // `pcak_<key id>_<secret>`: the audit log names the key by its id.
            let keyId = String(key.dropFirst("pcak_".count).prefix(16))
            func call(_ operation: String, _ json: String) async throws {
                let response = try await gateway.admin(operation, tenant: tenant, json, key: key)
                #expect(response.status == .ok, "\(String(buffer: response.body))")
            }
            try await call("", #"{"localId":"audited","email":"audit@example.com","password":"first secret"}"#)
            try await call(":update", #"{"localId":"audited","password":"second secret","customAttributes":"{\"tier\":\"gold\"}"}"#)
            try await call("", #"{"localId":"bulk1","disabled":true}"#)
            try await call("", #"{"localId":"bulk2"}"#)
            let hash = try await gateway.server.database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT password_hash FROM users WHERE uid = 'audited'", logger: TestDatabase.logger)
                var hash = ""
                for try await value in rows.decode(String.self) { hash = value }
                return hash
            }
            #expect(hash.count > 20)
            try await call(":delete", #"{"localId":"audited"}"#)
            try await call(":batchDelete", #"{"localIds":["bulk1","bulk2"]}"#)

            let response = try await gateway.send(.get, "/v2/projects/\(TestGateway.projectId)/tenants/\(tenant)/auditEvents", key: key)
            let events = try response.json().list(at: ["auditEvents"]).filter { $0.string(at: ["action"])?.hasPrefix("user.") == true }
            let summary = events.reversed().compactMap { event -> String? in
                guard let action = event.string(at: ["action"]), let target = event.string(at: ["target"]) else { return nil }
                return "\(action) \(target)"
            }
            #expect(
                summary == [
                    "user.create users/audited", "user.update users/audited", "user.create users/bulk1", "user.create users/bulk2",
                    "user.delete users/audited", "user.delete users/bulk1",
                ], "bulk2 is not disabled: kept")
            #expect(events.allSatisfy { $0.string(at: ["actor"]) == "adminKey:\(keyId)" })
            let update = try #require(events.first { $0.string(at: ["action"]) == "user.update" })
            #expect(update.list(at: ["after", "updatedFields"]) == ["customAttributes", "password"])
            #expect(update.value(at: ["after", "customAttributes", "tier"]) == "gold")
            #expect(
                update.value(at: ["before", "validSince"]) != update.value(at: ["after", "validSince"]), "the password change revoked")

            let stored = try await gateway.server.database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT coalesce(before::text, '') || coalesce(after::text, '') FROM audit_log", logger: TestDatabase.logger)
                var text = ""
                for try await row in rows.decode(String.self) { text += row }
                return text
            }
            #expect(stored.contains("audit@example.com"))
            for secret in ["first secret", "second secret", hash, "scrypt", "passwordHash"] {
                #expect(!stored.contains(secret), "the audit log holds \(secret)")
            }
        }
    }
}
