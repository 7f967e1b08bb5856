import Foundation
import PortcullisCore
import PortcullisJSON
import Testing

@Suite("Email trust")
struct EmailTrustTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let provider: String
        let email: String
        var claim: Bool? = nil
        var tid: String? = nil
        let trusted: Bool
        let verified: Bool
        var testDescription: String { "\(provider) \(email) claim=\(claim.map(String.init) ?? "–") tid=\(tid ?? "–")" }
    }

    static let corpDirectory = "6c1d3a55-0f3e-4d8e-9a3b-2f1c0e9d8b7a"

    static let tenantDomains = [
        TenantSettings.TrustedEmailDomain(providerId: "google.com", domain: "corp.example"),
        TenantSettings.TrustedEmailDomain(providerId: "oidc.corp", domain: "corp.example"),
        TenantSettings.TrustedEmailDomain(providerId: "microsoft.com", domain: "corp.example", tenantIds: [corpDirectory]),
    ]

    @Test(
        "every provider and domain of DESIGN §1, and tenant-added pairs",
        arguments: [
            // Google: Gmail and Googlemail only.
            Case(provider: "google.com", email: "a@gmail.com", trusted: true, verified: true),
            Case(provider: "google.com", email: "a@GMAIL.com", claim: true, trusted: true, verified: true),
            Case(provider: "google.com", email: "a@googlemail.com", trusted: true, verified: true),
            Case(provider: "google.com", email: "a@gmail.com", claim: false, trusted: true, verified: false),
            Case(provider: "google.com", email: "a@example.com", claim: true, trusted: false, verified: false),
            Case(provider: "google.com", email: "a@yahoo.com", claim: true, trusted: false, verified: false),
            // Yahoo: Yahoo Mail only.
            Case(provider: "yahoo.com", email: "a@yahoo.com", trusted: true, verified: true),
            Case(provider: "yahoo.com", email: "a@yahoo.com", claim: false, trusted: true, verified: false),
            Case(provider: "yahoo.com", email: "a@gmail.com", claim: true, trusted: false, verified: false),
            // Microsoft: Outlook and Hotmail only, from its consumer directory; a tenant's domain from its directories.
            Case(
                provider: "microsoft.com", email: "a@outlook.com", tid: EmailTrust.microsoftConsumerDirectory, trusted: true,
                verified: true),
            Case(
                provider: "microsoft.com", email: "a@hotmail.com", claim: true, tid: EmailTrust.microsoftConsumerDirectory,
                trusted: true, verified: true),
            Case(provider: "microsoft.com", email: "a@outlook.com", claim: true, tid: corpDirectory, trusted: false, verified: false),
            Case(provider: "microsoft.com", email: "a@outlook.com", claim: true, trusted: false, verified: false),
            Case(
                provider: "microsoft.com", email: "a@contoso.com", claim: true, tid: EmailTrust.microsoftConsumerDirectory,
                trusted: false, verified: false),
            Case(provider: "microsoft.com", email: "a@corp.example", claim: true, tid: corpDirectory, trusted: true, verified: true),
            Case(
                provider: "microsoft.com", email: "a@corp.example", claim: true, tid: corpDirectory.uppercased(), trusted: true,
                verified: true),
            Case(
                provider: "microsoft.com", email: "a@corp.example", claim: true, tid: "0badc0de-0000-4000-8000-000000000000",
                trusted: false, verified: false),
            Case(provider: "microsoft.com", email: "a@corp.example", claim: true, trusted: false, verified: false),
            // Apple: always.
            Case(provider: "apple.com", email: "x@privaterelay.appleid.com", trusted: true, verified: true),
            Case(provider: "apple.com", email: "a@example.com", claim: true, trusted: true, verified: true),
            Case(provider: "apple.com", email: "a@example.com", claim: false, trusted: true, verified: false),
            // Never trusted, whatever they claim.
            Case(provider: "facebook.com", email: "a@gmail.com", claim: true, trusted: false, verified: false),
            Case(provider: "github.com", email: "a@github.com", claim: true, trusted: false, verified: false),
            Case(provider: "twitter.com", email: "a@twitter.com", claim: true, trusted: false, verified: false),
            Case(provider: "oidc.other", email: "a@corp.example", claim: true, trusted: false, verified: false),
            Case(provider: "password", email: "a@gmail.com", claim: true, trusted: false, verified: false),
            // Tenant-added pairs.
            Case(provider: "google.com", email: "a@corp.example", trusted: true, verified: true),
            Case(provider: "google.com", email: "a@CORP.example", claim: false, trusted: true, verified: false),
            Case(provider: "oidc.corp", email: "a@corp.example", claim: true, trusted: true, verified: true),
            Case(provider: "oidc.corp", email: "a@gmail.com", claim: true, trusted: false, verified: false),
            Case(provider: "github.com", email: "a@corp.example", claim: true, trusted: false, verified: false),
            // Not an address.
            Case(provider: "apple.com", email: "no-at-sign", trusted: false, verified: false),
            Case(provider: "google.com", email: "a@", trusted: false, verified: false),
        ])
    func trust(_ test: Case) {
        #expect(
            EmailTrust.isTrusted(providerId: test.provider, email: test.email, directory: test.tid, tenantDomains: Self.tenantDomains)
                == test.trusted)
        #expect(
            EmailTrust.isVerified(
                providerId: test.provider, email: test.email, claim: test.claim, directory: test.tid,
                tenantDomains: Self.tenantDomains) == test.verified)
    }

    @Test("Microsoft vouches for Outlook and Hotmail only from its consumer directory; access tokens prove nothing")
    func identityRules() {
        func identity(_ provider: String, _ email: String, tid: String? = nil, accessToken: Bool = false) -> FederatedIdentity {
            FederatedIdentity(
                providerId: provider, federatedId: "x", email: email,
                rawUserInfo: .object(tid.map { ["tid": .string($0)] } ?? [:]), fromAccessToken: accessToken)
        }
        #expect(EmailTrust.provesEmail(identity("microsoft.com", "a@outlook.com", tid: EmailTrust.microsoftConsumerDirectory)))
        #expect(!EmailTrust.provesEmail(identity("microsoft.com", "a@outlook.com", tid: "0000-attacker-directory")))
        #expect(!EmailTrust.provesEmail(identity("microsoft.com", "a@hotmail.com")))
        #expect(!EmailTrust.provesEmail(identity("google.com", "a@gmail.com", accessToken: true)))
        #expect(EmailTrust.provesEmail(identity("google.com", "a@gmail.com")))
        #expect(!EmailTrust.provesEmail(FederatedIdentity(providerId: "apple.com", federatedId: "x")))
    }

    @Test("a tenant's microsoft.com pair must name its directories; tenantIds belong to microsoft.com only")
    func microsoftPairsNeedDirectories() throws {
        func settings(_ json: String) throws -> TenantSettings { try TenantSettings(json: JSONValue.parse(Array(json.utf8))) }
        #expect(throws: AuthError.self) {
            try settings(#"{"trustedEmailDomains":[{"providerId":"microsoft.com","domain":"corp.example"}]}"#)
        }
        #expect(throws: AuthError.self) {
            try settings(#"{"trustedEmailDomains":[{"providerId":"microsoft.com","domain":"corp.example","tenantIds":["corp"]}]}"#)
        }
        #expect(throws: AuthError.self) {
            try settings(
                #"{"trustedEmailDomains":[{"providerId":"google.com","domain":"corp.example","tenantIds":["\#(Self.corpDirectory)"]}]}"#)
        }
        let parsed = try settings(
            #"{"trustedEmailDomains":[{"providerId":"microsoft.com","domain":"Corp.Example","tenantIds":["\#(Self.corpDirectory.uppercased())"]}]}"#
        )
        #expect(parsed.trustedEmailDomains == [Self.tenantDomains[2]])
        #expect(try TenantSettings(json: parsed.json) == parsed)
    }

    @Test("a tenant's pairs do not apply without it")
    func tenantPairsAreTenantScoped() {
        #expect(!EmailTrust.isTrusted(providerId: "google.com", email: "a@corp.example"))
        #expect(!EmailTrust.isTrusted(providerId: "oidc.corp", email: "a@corp.example"))
    }
}

@Suite("Account linking")
struct AccountLinkingTests {
    typealias Existing = AccountLinking.ExistingProvider

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let existing: [Existing]
        var emailVerified = false
        let incoming: Bool
        let expected: AccountLinking.Decision
        var testDescription: String { name }
    }

    @Test(
        "the four cases of DESIGN §1 and the password override",
        arguments: [
            Case(
                name: "1: untrusted, then untrusted", existing: [Existing(providerId: "facebook.com", provesEmail: false)],
                incoming: false, expected: .needConfirmation),
            Case(
                name: "2: trusted, then untrusted", existing: [Existing(providerId: "google.com", provesEmail: true)],
                incoming: false, expected: .needConfirmation),
            Case(
                name: "3: untrusted, then trusted", existing: [Existing(providerId: "github.com", provesEmail: false)],
                incoming: true, expected: .replace(unlinking: ["github.com"], removePassword: false)),
            Case(
                name: "4: trusted, then trusted", existing: [Existing(providerId: "google.com", provesEmail: true)],
                incoming: true, expected: .link),
            Case(
                name: "unverified password, then trusted",
                existing: [Existing(providerId: "password", provesEmail: false)],
                incoming: true, expected: .replace(unlinking: [], removePassword: true)),
            Case(
                name: "unverified password and untrusted, then trusted",
                existing: [
                    Existing(providerId: "password", provesEmail: false), Existing(providerId: "facebook.com", provesEmail: false),
                    Existing(providerId: "github.com", provesEmail: false),
                ],
                incoming: true, expected: .replace(unlinking: ["facebook.com", "github.com"], removePassword: true)),
            Case(
                name: "verified password, then trusted", existing: [Existing(providerId: "password", provesEmail: true)],
                emailVerified: true, incoming: true, expected: .link),
            Case(
                name: "verified password, then untrusted", existing: [Existing(providerId: "password", provesEmail: true)],
                emailVerified: true, incoming: false, expected: .needConfirmation),
            Case(
                name: "untrusted link on a verified email, then trusted",
                existing: [Existing(providerId: "github.com", provesEmail: false)], emailVerified: true, incoming: true,
                expected: .link),
            Case(
                name: "trusted beside untrusted, then trusted: nothing is removed",
                existing: [
                    Existing(providerId: "apple.com", provesEmail: true), Existing(providerId: "github.com", provesEmail: false),
                ],
                incoming: true, expected: .link),
            Case(
                name: "no providers, unverified, then trusted", existing: [], incoming: true,
                expected: .replace(unlinking: [], removePassword: false)),
            Case(name: "no providers, then untrusted", existing: [], incoming: false, expected: .needConfirmation),
        ])
    func decide(_ test: Case) {
        #expect(
            AccountLinking.decide(existing: test.existing, emailVerified: test.emailVerified, incomingProvesEmail: test.incoming)
                == test.expected)
    }

    @Test("an account's providers are judged against its email")
    func existingProviders() {
        let user = User(
            tenantId: nil, uid: "u", email: "a@gmail.com", emailVerified: false, hasPassword: true,
            providers: [
                ProviderLink(providerId: "password", federatedId: "a@gmail.com"),
                ProviderLink(providerId: "google.com", federatedId: "g1", email: "a@gmail.com"),
                ProviderLink(providerId: "github.com", federatedId: "7"),
            ], createdAt: .init(timeIntervalSince1970: 0))
        #expect(
            AccountLinking.existingProviders(of: user, tenantDomains: []) == [
                Existing(providerId: "password", provesEmail: false), Existing(providerId: "google.com", provesEmail: true),
                Existing(providerId: "github.com", provesEmail: false),
            ])
    }

    @Test("a trusted link proves the account's email only if it asserted that address")
    func linkMustAssertTheEmail() {
        let squatted = User(
            tenantId: nil, uid: "u", email: "victim@gmail.com", hasPassword: true,
            providers: [
                ProviderLink(providerId: "password", federatedId: "victim@gmail.com", email: "victim@gmail.com"),
                ProviderLink(providerId: "google.com", federatedId: "g-attacker", email: "attacker@gmail.com"),
                ProviderLink(providerId: "apple.com", federatedId: "a-attacker", email: "relay@privaterelay.appleid.com"),
            ], createdAt: .init(timeIntervalSince1970: 0))
        let existing = AccountLinking.existingProviders(of: squatted, tenantDomains: [])
        #expect(existing.allSatisfy { !$0.provesEmail })
        #expect(
            AccountLinking.decide(existing: existing, emailVerified: false, incomingProvesEmail: true)
                == .replace(unlinking: ["apple.com", "google.com"], removePassword: true))
    }

    @Test("the last way in cannot be removed")
    func lastSignInMethod() {
        let user = User(
            tenantId: nil, uid: "u", email: "a@gmail.com",
            providers: [
                ProviderLink(providerId: "password", federatedId: "a@gmail.com"),
                ProviderLink(providerId: "google.com", federatedId: "g1"),
            ], createdAt: .init(timeIntervalSince1970: 0))
        #expect(!AccountLinking.wouldRemoveLastSignInMethod(user, removing: ["google.com"]))
        #expect(AccountLinking.wouldRemoveLastSignInMethod(user, removing: ["google.com", "password"]))
        #expect(!AccountLinking.wouldRemoveLastSignInMethod(user, removing: ["facebook.com"]))
    }
}
