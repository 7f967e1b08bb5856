import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth

/// Account deletions, by the user or an admin, racing everything else that writes the
/// account: the account goes whole, and every racing request gets a deleted account's
/// answer, never a fault.
@Suite("Deletion races")
struct DeletionRaceTests {
    enum Deleter: String, CaseIterable, Sendable {
        case user, admin

        func delete(_ session: AccountService.SignedIn, tenant: String, on harness: AuthHarness) async throws {
            switch self {
            case .user: try await harness.accounts.deleteSelf(idToken: session.tokens.idToken, tenantId: tenant)
            case .admin: try await harness.adminAccounts.delete(tenant: TenantScope(tenant), uid: session.user.uid, actor: "test")
            }
        }
    }

    @Test(
        "30 deletions, each racing the first refresh of its user's session and an admin update: all answer as for a deleted user",
        arguments: Deleter.allCases)
    func deletionRacesFirstRefresh(deleter: Deleter) async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            var signedUp: [AccountService.SignedIn] = []
            for index in 0..<30 { signedUp.append(try await harness.signUp("trio\(index)@example.com", tenant: tenant)) }
            let sessions = signedUp
            // For each user: its deletion; the first refresh of its session (which rotates the session row,
            // then stamps the user row); an update holding the user row a moment.
            let outcomes = try await race(90) { index -> Bool in
                let session = sessions[index / 3]
                switch index % 3 {
                case 0:
                    try await deleter.delete(session, tenant: tenant, on: harness)
                    return true
                case 1:
                    _ = try await harness.tokens.refresh(session.tokens.refreshToken)
                default:
                    _ = try await AdminRaceTests.update(harness, tenant: tenant, uid: session.user.uid, displayName: "name \(index)")
                }
                return false
            }
            let deletions = stride(from: 0, to: 90, by: 3).map { outcomes[$0] }
            #expect(deletions.successes().count == 30, "\(deletions.codes())")
            let refreshes = stride(from: 1, to: 90, by: 3).map { outcomes[$0] }
            #expect(Set(refreshes.codes().keys).isSubset(of: [.invalidRefreshToken]), "\(refreshes.codes())")
            let updates = stride(from: 2, to: 90, by: 3).map { outcomes[$0] }
            #expect(Set(updates.codes().keys).isSubset(of: [.userNotFound]), "\(updates.codes())")
            #expect(try await harness.count("SELECT count(*) FROM users WHERE tenant_id = \(tenant)") == 0)
            #expect(try await harness.count("SELECT count(*) FROM refresh_sessions WHERE tenant_id = \(tenant)") == 0)
        }
    }

    @Test("a self-deletion racing updates, refreshes, sign-ins and other deletions leaves no half-user behind, every time")
    func selfDeletionLeavesNothing() async throws {
        try await AuthHarness.run(abuse: AccountRaceTests.unlimited) { harness in
            let tenant = try await harness.createTenant()
            for round in 0..<3 {
                let email = "leaving\(round)@example.com"
                let session = try await harness.signUp(email, tenant: tenant)
                let uid = session.user.uid
                // Ten of each: deletions, profile updates, refreshes of one token, sign-ins.
                let outcomes = try await race(40) { index -> String? in
                    switch index % 4 {
                    case 0:
                        try await harness.accounts.deleteSelf(idToken: session.tokens.idToken, tenantId: tenant)
                        return "deleted"
                    case 1:
                        let changes = AccountService.Changes(profile: .init(displayName: "name \(index)"))
                        _ = try await harness.accounts.update(idToken: session.tokens.idToken, tenantId: tenant, changes: changes)
                        return nil
                    case 2:
                        return try await harness.tokens.refresh(session.tokens.refreshToken).tokens.refreshToken
                    default:
                        return try await harness.signIn(email, tenant: tenant).tokens.refreshToken
                    }
                }
                let deletions = stride(from: 0, to: 40, by: 4).map { outcomes[$0] }
                #expect(deletions.successes().count == 1)
                #expect(deletions.codes() == [.userNotFound: 9])
                #expect(
                    Set(outcomes.codes().keys).isSubset(of: [.userNotFound, .invalidRefreshToken, .emailNotFound]),
                    "\(outcomes.codes())")

                #expect(try await harness.users.find(tenant: TenantScope(tenant), uid: uid) == nil)
                #expect(try await harness.users.find(tenant: TenantScope(tenant), email: email) == nil)
                for table in ["users", "refresh_sessions", "user_providers"] {
                    let rows = try await harness.count(
                        "SELECT count(*) FROM \(unescaped: table) WHERE tenant_id = \(tenant) AND uid = \(uid)")
                    #expect(rows == 0, "\(table)")
                }
                // Tokens handed out while the deletion ran are dead with it.
                for case .success(let token?) in outcomes where token != "deleted" {
                    await #expect(throws: AuthError(.invalidRefreshToken)) { try await harness.tokens.refresh(token) }
                }
                await #expect(throws: AuthError(.emailNotFound)) { try await harness.signIn(email, tenant: tenant) }
            }
        }
    }

    @Test("an admin's deletion racing admin updates, refreshes, lookups and other deletions leaves no half-user, every time")
    func adminDeletionLeavesNothing() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            for round in 0..<3 {
                let session = try await harness.signUp("gone\(round)@example.com", tenant: tenant)
                let uid = session.user.uid
                // Ten of each: deletions, updates (some disabling), refreshes of one token, lookups.
                let outcomes = try await race(40) { index -> Bool in
                    switch index % 4 {
                    case 0:
                        try await harness.adminAccounts.delete(tenant: TenantScope(tenant), uid: uid, actor: "test")
                        return true
                    case 1:
                        _ = try await AdminRaceTests.update(
                            harness, tenant: tenant, uid: uid, disabled: index % 8 == 1, claims: ["n": .integer(Int64(index))],
                            displayName: "name \(index)")
                    case 2:
                        _ = try await harness.tokens.refresh(session.tokens.refreshToken)
                    default:
                        _ = try await harness.adminAccounts.lookup(tenant: TenantScope(tenant), uid: uid)
                    }
                    return false
                }
                let deletions = stride(from: 0, to: 40, by: 4).map { outcomes[$0] }
                #expect(deletions.successes().count == 1)
                #expect(deletions.codes() == [.userNotFound: 9])
                let allowed: Set<AuthError.Code> = [.userNotFound, .invalidRefreshToken, .tokenExpired, .userDisabled]
                #expect(Set(outcomes.codes().keys).isSubset(of: allowed), "\(outcomes.codes())")

                #expect(try await harness.adminAccounts.lookup(tenant: TenantScope(tenant), uid: uid) == nil)
                for table in ["users", "refresh_sessions", "user_providers"] {
                    let rows = try await harness.count(
                        "SELECT count(*) FROM \(unescaped: table) WHERE tenant_id = \(tenant) AND uid = \(uid)")
                    #expect(rows == 0, "\(table)")
                }
                await #expect(throws: AuthError(.invalidRefreshToken)) { try await harness.tokens.refresh(session.tokens.refreshToken) }
                await #expect(throws: AuthError(.userNotFound)) {
                    try await AdminRaceTests.update(harness, tenant: tenant, uid: uid, displayName: "too late")
                }
            }
        }
    }
}
