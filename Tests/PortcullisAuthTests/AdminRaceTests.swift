import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
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
            tenant: TenantScope(tenant), uid: uid,
            .init(displayName: displayName, disabled: disabled, emailVerified: emailVerified, customAttributes: claims), actor: "test")
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
                let user = try #require(try await harness.adminAccounts.lookup(tenant: TenantScope(tenant), uid: uid))
                #expect(user.disabled && user.emailVerified)
                let levels = Set(stride(from: 0, to: 40, by: 4).map { JSONValue.integer(Int64($0)) })
                #expect(user.customAttributes["level"].map(levels.contains) == true, "\(user.customAttributes)")
                let names = Set(stride(from: 1, to: 40, by: 4).map { "name \($0)" })
                #expect(user.displayName.map(names.contains) == true, "\(user.displayName ?? "no name")")
            }
        }
    }

    @Test("an admin disable racing 50 profile updates (admin and end user): the user ends disabled with the disable's validSince")
    func disableRacesProfileUpdates() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            for round in 0..<3 {
                let session = try await harness.signUp("race\(round)@example.com", tenant: tenant)
                let uid = session.user.uid
                let outcomes = try await race(51) { index -> User? in
                    switch index {
                    case 25:
                        return try await harness.adminAccounts.update(
                            tenant: TenantScope(tenant), uid: uid, .init(disabled: true), actor: "race")
                    case let index where index.isMultiple(of: 2):
                        return try await harness.adminAccounts.update(
                            tenant: TenantScope(tenant), uid: uid,
                            .init(
                                displayName: "admin \(index)", photoURL: "https://p/\(index).png",
                                customAttributes: ["n": .integer(Int64(index))]),
                            actor: "race")
                    default:
                        let changes = AccountService.Changes(profile: .init(displayName: "user \(index)"))
                        _ = try await harness.accounts.update(idToken: session.tokens.idToken, tenantId: tenant, changes: changes)
                        return nil
                    }
                }
                let disable = try #require(outcomes[25].value.flatMap { $0 })
                #expect(disable.disabled)
                // Admin updates never fail; an end user's fails only once the disable has landed.
                #expect(outcomes.enumerated().filter { $0.offset.isMultiple(of: 2) }.allSatisfy { $0.element.code == nil })
                #expect(Set(outcomes.codes().keys).isSubset(of: [.userDisabled, .tokenExpired]), "\(outcomes.codes())")
                let user = try #require(try await harness.adminAccounts.lookup(tenant: TenantScope(tenant), uid: uid))
                #expect(user.disabled)
                #expect(user.validSince == disable.validSince, "no profile update moved the watermark")
                #expect(user.displayName?.hasPrefix("admin ") == true || user.displayName?.hasPrefix("user ") == true)
                #expect(try await harness.count("SELECT count(*) FROM audit_log WHERE action = 'user.update'") >= 26)
            }
        }
    }

    @Test("20 admins linking one identity to 20 users at once: exactly one holds it, the others get FEDERATED_USER_ID_ALREADY_LINKED")
    func linkingRace() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            var uids: [String] = []
            for index in 0..<20 {
                uids.append(try await harness.signUp("link\(index)@example.com", tenant: tenant).user.uid)
            }
            let identity = ProviderLink(providerId: "google.com", federatedId: "contested")
            let outcomes = try await race(20) { [uids] index in
                try await harness.adminAccounts.update(
                    tenant: TenantScope(tenant), uid: uids[index], .init(linkProvider: identity), actor: "race")
            }
            #expect(outcomes.successes().count == 1)
            #expect(outcomes.codes() == [.federatedUserIdAlreadyLinked: 19])
            let owner = try #require(outcomes.successes().first)
            let found = try await harness.adminAccounts.lookup(
                tenant: TenantScope(tenant), uids: [], emails: [], phoneNumbers: [],
                federatedIds: [.init(providerId: "google.com", rawId: "contested")])
            #expect(found.map(\.uid) == [owner.uid])
        }
    }
}
