import PortcullisCore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// Credential changes racing each other: whichever change holds is the only
/// credential, and only its session lives.
@Suite("Credential races")
struct CredentialRaceTests {
    enum Credential: String, CaseIterable, Sendable {
        case password, email

        func change(_ index: Int) -> AccountService.Changes {
            switch self {
            case .password: .init(password: "new secret \(index)")
            case .email: .init(email: "moved\(index)@example.com")
            }
        }

        /// Signs in with what change `index` set.
        func signIn(_ harness: AuthHarness, _ index: Int, tenant: String) async throws -> AccountService.SignedIn {
            switch self {
            case .password: try await harness.signIn("changer@example.com", "new secret \(index)", tenant: tenant)
            case .email: try await harness.signIn("moved\(index)@example.com", tenant: tenant)
            }
        }
    }

    @Test(
        "10 changes of one credential at once: one holds, the old one is dead, and only the holder's new session lives",
        arguments: Credential.allCases)
    func concurrentChanges(credential: Credential) async throws {
        try await AuthHarness.run(abuse: AccountRaceTests.unlimited) { harness in
            let tenant = try await harness.createTenant()
            let original = try await harness.signUp("changer@example.com", tenant: tenant)
            // A second later, so the first change's watermark ends the presented token for the changes that check it after.
            harness.clock.advance(seconds: 1)
            let outcomes = try await race(10) { index in
                let (_, tokens) = try await harness.accounts.update(
                    idToken: original.tokens.idToken, tenantId: tenant, changes: credential.change(index))
                guard let tokens else { throw TestSetupError("a credential change returned no tokens") }
                return tokens
            }
            #expect(Set(outcomes.codes().keys).isSubset(of: [.tokenExpired]), "\(outcomes.codes())")
            let changed = outcomes.enumerated().compactMap { index, outcome in outcome.value.map { (index, $0) } }
            #expect(!changed.isEmpty)

            // Exactly one of the changes holds.
            var holders: [Int] = []
            for (index, _) in changed {
                if (try? await credential.signIn(harness, index, tenant: tenant)) != nil { holders.append(index) }
            }
            #expect(holders.count == 1, "credentials in force: \(holders)")
            await #expect(throws: AuthError.self) { try await harness.signIn("changer@example.com", tenant: tenant) }
            await #expect(throws: AuthError(.tokenExpired)) { try await harness.tokens.refresh(original.tokens.refreshToken) }

            // Only the holder's session lives: a change that lost was revoked by the one that holds.
            var live: [Int] = []
            for (index, tokens) in changed {
                do {
                    _ = try await harness.tokens.refresh(tokens.refreshToken)
                    live.append(index)
                } catch let error as AuthError where error.code == .tokenExpired {}
            }
            #expect(live == holders, "live sessions \(live), credential of \(holders)")
        }
    }
}
