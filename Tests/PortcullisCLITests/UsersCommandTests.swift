import Foundation
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

@Suite("portcullis users import and export")
struct UsersCommandTests {
    static func write(_ json: JSONValue) throws -> String {
        let path = NSTemporaryDirectory() + "portcullis-users-\(UUID().uuidString).json"
        try Data(json.serializedBytes()).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("an auth:export file with a Firebase scrypt config imports, exports, and round-trips into another tenant unchanged")
    func roundTrip() async throws {
        let settings = try await TestDatabase.create()
        let arguments = ["--project-id", "p", "--database-url", DaemonTests.url(settings)]
        #expect(try await DaemonProcess.run(["migrate"] + arguments).status == 0)
        func tenant() async throws -> String {
            let created = try await DaemonProcess.run(["tenants", "create", "--display-name", "import"] + arguments)
            #expect(created.status == 0, "\(created.stderr)")
            return created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (source, target) = (try await tenant(), try await tenant())
        // What `firebase auth:export` writes (standard base64), and the console's hash parameters.
        let users: [JSONValue] = [
            .object([
                "localId": "u1", "email": "one@example.com", "emailVerified": true,
                "passwordHash": "c2lnbmVkIGtleSBieXRlcyBvZiBzb21lIGxlbmd0aCE=",
                "salt": "c2FsdHNhbHQ=", "displayName": "One", "createdAt": "1600000000000", "lastSignedInAt": "1600000100000",
                "customAttributes": #"{"plan":"pro"}"#,
                "providerUserInfo": .array([
                    .object(["providerId": "password", "rawId": "one@example.com", "email": "one@example.com"]),
                    .object(["providerId": "google.com", "rawId": "g-1", "email": "one@example.com", "displayName": "One G"]),
                ]),
            ]),
            .object(["localId": "u2", "email": "two@example.com", "disabled": true, "createdAt": "1600000000000"]),
            .object(["localId": "u3", "email": "not an email"]),
        ]
        let file = try Self.write(.object(["users": .array(users)]))
        let config = try Self.write(
            .object([
                "algorithm": "SCRYPT", "base64_signer_key": "c2lnbmVkIGtleSBieXRlcyBvZiBzb21lIGxlbmd0aCE=",
                "base64_salt_separator": "Bw==", "rounds": 8, "mem_cost": 14,
            ]))
        let imported = try await DaemonProcess.run(
            ["users", "import", "--tenant", source, "--hash-config", config, file] + arguments)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("imported 2, skipped 0 (already present), failed 1"), "\(imported.stdout)")
        #expect(imported.stdout.contains("INVALID_EMAIL: 1 (users 2)"), "\(imported.stdout)")
        // Run again: nothing new, nothing lost.
        let again = try await DaemonProcess.run(["users", "import", "--tenant", source, "--hash-config", config, file] + arguments)
        #expect(again.stdout.contains("imported 0, skipped 2 (already present), failed 1"), "\(again.stdout)")

        let exported = NSTemporaryDirectory() + "portcullis-export-\(UUID().uuidString).json"
        let export = try await DaemonProcess.run(["users", "export", "--tenant", source, exported] + arguments)
        #expect(export.status == 0, "\(export.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: exported)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let first = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: exported))))
        guard case .array(let records)? = first.value(at: ["users"]) else { throw TestSetupError("no users in the export") }
        #expect(records.count == 2)
        let one = try #require(records.first)
        #expect(one.value(at: ["localId"]) == "u1" && one.value(at: ["lastSignedInAt"]) == "1600000100000")
        #expect(one.value(at: ["customAttributes"]) == .string(#"{"plan":"pro"}"#))
        guard case .string(let hash)? = one.value(at: ["portcullisPasswordHash"]) else { throw TestSetupError("no hash") }
        #expect(hash.hasPrefix("$firebase-scrypt$ln=14,r=8$"))
        #expect(records.last?.value(at: ["portcullisPasswordHash"]) == nil)

        // Into another tenant, without a hash config: the stored hashes travel as they are.
        let moved = try await DaemonProcess.run(["users", "import", "--tenant", target, exported] + arguments)
        #expect(moved.stdout.contains("imported 2, skipped 0 (already present), failed 0"), "\(moved.stdout) \(moved.stderr)")
        let second = NSTemporaryDirectory() + "portcullis-export-\(UUID().uuidString).json"
        #expect(try await DaemonProcess.run(["users", "export", "--tenant", target, second] + arguments).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: second)) == Data(contentsOf: URL(fileURLWithPath: exported)))
        for path in [file, config, exported, second] { try? FileManager.default.removeItem(atPath: path) }
    }
}
