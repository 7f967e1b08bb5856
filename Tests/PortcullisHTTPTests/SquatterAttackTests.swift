import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// A squatter registers the victim's address first, then tries to keep something once the
/// owner takes the account back (DESIGN.md §1, "Revocation covers its own second" and the
/// action-code rule): pending action codes, tokens minted in the takeover's own second.
@Suite("Squatter attacks on the takeover")
struct SquatterAttackTests {
    /// An admin's action link for `email` in the fixture's tenant: the code as the squatter's mailbox received it.
    static func code(_ fixture: FederationFixture, _ type: String, email: String, newEmail: String? = nil) async throws -> String {
        var body: [String: JSONValue] = ["requestType": .string(type), "email": .string(email), "returnOobLink": true]
        if let newEmail { body["newEmail"] = .string(newEmail) }
        let response = try await fixture.gateway.send(
            .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/accounts:sendOobCode",
            json: JSONValue.object(body).serialized())
        guard case .string(let link)? = try response.json().value(at: ["oobLink"]),
            let code = URLComponents(string: link)?.queryItems?.first(where: { $0.name == "oobCode" })?.value
        else { throw TestSetupError("no link: \(String(buffer: response.body))") }
        return code
    }

    @Test("a squatter's pending email change and reset codes die with the owner's takeover")
    func codesDieWithTheTakeover() async throws {
        try await FederationFixture.run { fixture in
            let gateway = fixture.gateway
            let squatter = try await gateway.signUp("victim@gmail.com", tenant: fixture.tenant)
            let change = try await Self.code(
                fixture, "VERIFY_AND_CHANGE_EMAIL", email: "victim@gmail.com", newEmail: "squatter@evil.example")
            let reset = try await Self.code(fixture, "PASSWORD_RESET", email: "victim@gmail.com")
            let verify = try await Self.code(fixture, "VERIFY_EMAIL", email: "victim@gmail.com")

            let (owner, _) = try await fixture.session("google.com", sub: "g-victim", email: "victim@gmail.com", name: "Victim")
            #expect(owner.uid == squatter.uid)

            // Each code, applied or inspected the way an SDK does, is dead.
            try await gateway.endUser("accounts:update", ["oobCode": .string(change)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            try await gateway.endUser("accounts:update", ["oobCode": .string(verify)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            try await gateway.endUser("accounts:resetPassword", ["oobCode": .string(reset)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            try await gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(reset), "newPassword": "squatter's own"], tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "INVALID_OOB_CODE")

            // The owner keeps the address, and the squatter's password never comes back.
            let lookup = try await gateway.endUser("accounts:lookup", ["idToken": .string(owner.idToken)], tenant: fixture.tenant)
            #expect(lookup.status == .ok)
            #expect(try lookup.json().list(at: ["users"]).first?.value(at: ["email"]) == "victim@gmail.com")
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "victim@gmail.com", "password": "squatter's own"], tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "INVALID_PASSWORD")

            // A code issued after the takeover works.
            let fresh = try await Self.code(fixture, "VERIFY_AND_CHANGE_EMAIL", email: "victim@gmail.com", newEmail: "owner@new.example")
            let applied = try await gateway.endUser("accounts:update", ["oobCode": .string(fresh)], tenant: fixture.tenant)
            #expect(applied.status == .ok, "\(String(buffer: applied.body))")
        }
    }

    @Test("tokens minted in the takeover's own second die with it; the owner's are issued after it")
    func theTakeoversOwnSecond() async throws {
        let clock = ManualClock(Timestamp(microseconds: (SystemClock().now().seconds - 30) * 1_000_000 + 100_000))
        try await FederationFixture.run(configure: { $0.clock = clock }) { fixture in
            let gateway = fixture.gateway
            _ = try await gateway.signUp("victim@gmail.com", tenant: fixture.tenant)
            // The squatter signs in again and again; the last sign-in lands in the takeover's second.
            clock.advance(seconds: 1)
            let second = clock.now().seconds
            let squatter = try await gateway.signIn("victim@gmail.com", tenant: fixture.tenant)
            clock.set(Timestamp(microseconds: clock.now().microseconds + 400_000))
            let (owner, _) = try await fixture.session("google.com", sub: "g-victim", email: "victim@gmail.com")
            #expect(owner.uid == squatter.uid)

            let ownerClaims = owner.claims
            #expect(ownerClaims.value(at: ["auth_time"]) == .integer(second + 1))
            try await gateway.endUser("accounts:lookup", ["idToken": .string(squatter.idToken)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            #expect(try await gateway.refresh(squatter.refreshToken).errorMessage == "TOKEN_EXPIRED")
            #expect(
                try await gateway.endUser(
                    "accounts:lookup", ["idToken": .string(owner.idToken)], tenant: fixture.tenant
                ).status == .ok)
            #expect(try await gateway.refresh(owner.refreshToken).status == .ok)
            // The squatter's token is no longer fresh enough, or live enough, to ask for a new email change.
            try await gateway.endUser(
                "accounts:sendOobCode",
                ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": .string(squatter.idToken), "newEmail": "s@evil.example"],
                tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "TOKEN_EXPIRED")
        }
    }

    @Test("a token from an Entra directory the tenant did not list proves nothing about a trusted domain")
    func microsoftDirectories() async throws {
        let corp = "6c1d3a55-0f3e-4d8e-9a3b-2f1c0e9d8b7a"
        try await FederationFixture.run { fixture in
            let gateway = fixture.gateway
            // A pair without directories is refused: any directory can put any address in its tokens.
            let unpinned = try await gateway.send(
                .patch, "\(gateway.tenants)/\(fixture.tenant)?updateMask=trustedEmailDomains",
                json: #"{"trustedEmailDomains":[{"providerId":"microsoft.com","domain":"corp.example"}]}"#)
            unpinned.expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await gateway.patchTenant(
                fixture.tenant, mask: "trustedEmailDomains",
                #"{"trustedEmailDomains":[{"providerId":"microsoft.com","domain":"corp.example","tenantIds":["\#(corp)"]}]}"#)
            let (employee, first) = try await fixture.session(
                "microsoft.com", sub: "ms-employee", email: "ceo@corp.example", extraClaims: ["tid": .string(corp)])
            #expect(first.value(at: ["emailVerified"]) == .bool(true))
            // An attacker's own directory asserts the same address: no tokens, the account stays the employee's.
            let attack = try await fixture.signIn(
                "microsoft.com",
                idToken: fixture.idp.idToken(
                    sub: "ms-attacker", email: "ceo@corp.example", extraClaims: ["tid": "0badc0de-0000-4000-8000-000000000000"]))
            try AccountLinkingFlowTests.expectNeedConfirmation(
                attack, email: "ceo@corp.example", provider: "microsoft.com", federatedId: "ms-attacker")
            // Nor does a token without a directory.
            let bare = try await fixture.signIn(
                "microsoft.com", idToken: fixture.idp.idToken(sub: "ms-bare", email: "ceo@corp.example"))
            #expect(try bare.json().value(at: ["idToken"]) == nil)
            #expect(try await gateway.refresh(employee.refreshToken).status == .ok)
        }
    }

    @Test("adding a way in needs a recent sign-in, except for a guest upgrading")
    func staleTokenCannotLink() async throws {
        let clock = ManualClock()
        try await FederationFixture.run(
            tenantSettings: #"{"allowPasswordSignup":true,"enableAnonymousUser":true}"#, configure: { $0.clock = clock }
        ) { fixture in
            let gateway = fixture.gateway
            let victim = try await gateway.signUp("victim@example.com", tenant: fixture.tenant)
            let guest = try await gateway.endUser("accounts:signUp", [:], tenant: fixture.tenant)
            let guestSession = try Session(guest.json())
            // Both tokens are still valid (lifetime 1 h) but ten minutes old.
            clock.advance(seconds: 600)
            let stolen = try await fixture.signIn(
                "github.com", idToken: fixture.idp.idToken(sub: "gh-thief", email: "thief@example.com"), linkTo: victim.idToken)
            stolen.expectEnvelope(.badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            // The thief's identity is not linked: it signs in to an account of its own.
            let (thief, _) = try await fixture.session("github.com", sub: "gh-thief", email: "thief@example.com")
            #expect(thief.uid != victim.uid)
            let upgraded = try await fixture.signIn(
                "github.com", idToken: fixture.idp.idToken(sub: "gh-guest", email: "guest@example.com"),
                linkTo: guestSession.idToken)
            #expect(upgraded.status == .ok, "\(String(buffer: upgraded.body))")
            #expect(try upgraded.json().value(at: ["localId"]) == .string(guestSession.uid))
        }
    }
}
