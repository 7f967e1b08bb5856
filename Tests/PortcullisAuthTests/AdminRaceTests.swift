import PortcullisCore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// Admin writes to one account racing each other (deletions: `DeletionRaceTests`).
@Suite("Admin account races")
struct AdminRaceTests {
    static func update(
        _ harness: AuthHarness, tenant: String, uid: String, disabled: Bool? = nil, emailVerified: Bool? = nil,
        claims: [String: JSONValue]? = nil, displayName: String? = nil
    ) async throws -> User {
        try await harness.adminAccounts.update(
            tenantId: tenant, uid: uid, disabled: disabled, validSince: nil, emailVerified: emailVerified,
            customAttributes: claims, displayName: displayName)
    }

    @Test("40 admin updates of four disjoint fields at once: each field holds a value some update wrote")
    func disjointFields() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            for round in 0..<3 {
                let uid = try await harness.signUp("fields\(round)@example.com", tenant: tenant).user.uid
                let outcomes = try await race(40) { index -> User in
                    switch index % 4 {
                    case 0: return try await Self.update(harness, tenant: tenant, uid: uid, claims: ["level": .integer(Int64(index))])
                    case 1: return try await Self.update(harness, tenant: tenant, uid: uid, displayName: "name \(index)")
                    case 2: return try await Self.update(harness, tenant: tenant, uid: uid, emailVerified: true)
                    default: return try await Self.update(harness, tenant: tenant, uid: uid, disabled: true)
                    }
                }
                #expect(outcomes.successes().count == 40)
                let user = try #require(try await harness.adminAccounts.lookup(tenantId: tenant, uid: uid))
                #expect(user.disabled && user.emailVerified)
                let levels = Set(stride(from: 0, to: 40, by: 4).map { JSONValue.integer(Int64($0)) })
                #expect(user.customAttributes["level"].map(levels.contains) == true, "\(user.customAttributes)")
                let names = Set(stride(from: 1, to: 40, by: 4).map { "name \($0)" })
                #expect(user.displayName.map(names.contains) == true, "\(user.displayName ?? "no name")")
            }
        }
    }
}
