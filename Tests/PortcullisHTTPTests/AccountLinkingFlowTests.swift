import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

@Suite("Automatic and explicit account linking")
struct AccountLinkingFlowTests {
    /// Expects a `needConfirmation` answer: the email, provider and identity, no tokens, no uid.
    static func expectNeedConfirmation(
        _ response: TestResponse, email: String, provider: String, federatedId: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == .ok, "\(String(buffer: response.body))", sourceLocation: sourceLocation)
        let json = try response.json()
        #expect(json.value(at: ["needConfirmation"]) == .bool(true), sourceLocation: sourceLocation)
        #expect(json.value(at: ["email"]) == .string(email), sourceLocation: sourceLocation)
        #expect(json.value(at: ["providerId"]) == .string(provider), sourceLocation: sourceLocation)
        #expect(json.value(at: ["federatedId"]) == .string(federatedId), sourceLocation: sourceLocation)
        #expect(json.value(at: ["idToken"]) == nil, sourceLocation: sourceLocation)
        #expect(json.value(at: ["refreshToken"]) == nil, sourceLocation: sourceLocation)
        #expect(json.value(at: ["localId"]) == nil, sourceLocation: sourceLocation)
    }

    @Test("case 1: untrusted, then another untrusted → needConfirmation")
    func untrustedThenUntrusted() async throws {
        try await FederationFixture.run { fixture in
            _ = try await fixture.session("facebook.com", sub: "fb-1", email: "sam@example.com")
            let response = try await fixture.signIn("github.com", idToken: fixture.idp.idToken(sub: "gh-1", email: "sam@example.com"))
            try Self.expectNeedConfirmation(response, email: "sam@example.com", provider: "github.com", federatedId: "gh-1")
        }
    }

    @Test("case 2: trusted, then untrusted → needConfirmation")
    func trustedThenUntrusted() async throws {
        try await FederationFixture.run { fixture in
            _ = try await fixture.session("google.com", sub: "g-1", email: "sam@gmail.com")
            let response = try await fixture.signIn("facebook.com", idToken: fixture.idp.idToken(sub: "fb-1", email: "sam@gmail.com"))
            try Self.expectNeedConfirmation(response, email: "sam@gmail.com", provider: "facebook.com", federatedId: "fb-1")
        }
    }

    @Test("case 3: untrusted, then trusted → the trusted provider replaces it and its sessions end")
    func untrustedThenTrusted() async throws {
        try await FederationFixture.run { fixture in
            let (squatter, _) = try await fixture.session("github.com", sub: "gh-1", email: "sam@gmail.com", name: "Squatter")
            let (owner, answer) = try await fixture.session("google.com", sub: "g-1", email: "sam@gmail.com", name: "Sam")
            #expect(owner.uid == squatter.uid)
            #expect(answer.value(at: ["isNewUser"]) == .bool(false))
            #expect(owner.claims.value(at: ["name"]) == .string("Sam"))
            #expect(owner.claims.value(at: ["firebase", "identities", "github.com"]) == nil)
            #expect(owner.claims.value(at: ["email_verified"]) == .bool(true))
            // The squatter's session is over, and signing in with GitHub again must ask.
            let refresh = try await fixture.gateway.refresh(squatter.refreshToken)
            refresh.expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            let again = try await fixture.signIn("github.com", idToken: fixture.idp.idToken(sub: "gh-1", email: "sam@gmail.com"))
            try Self.expectNeedConfirmation(again, email: "sam@gmail.com", provider: "github.com", federatedId: "gh-1")
            #expect(try await fixture.gateway.refresh(owner.refreshToken).status == .ok)
        }
    }

    @Test("an unverified password is removed and the profile overwritten when a trusted provider signs in")
    func passwordOverride() async throws {
        try await FederationFixture.run { fixture in
            let gateway = fixture.gateway
            let squatter = try await gateway.signUp("victim@gmail.com", tenant: fixture.tenant)
            let profile = try await gateway.endUser(
                "accounts:update", ["idToken": .string(squatter.idToken), "displayName": "Squatter"], tenant: fixture.tenant)
            #expect(profile.status == .ok)
            let (owner, _) = try await fixture.session("google.com", sub: "g-victim", email: "victim@gmail.com", name: "Victim")
            #expect(owner.uid == squatter.uid)
            #expect(owner.claims.value(at: ["name"]) == .string("Victim"))
            let password = try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "victim@gmail.com", "password": "correct horse"], tenant: fixture.tenant)
            #expect(password.status == .badRequest)
            #expect(try await gateway.refresh(squatter.refreshToken).errorMessage == "TOKEN_EXPIRED")
            let lookup = try await gateway.endUser("accounts:lookup", ["idToken": .string(owner.idToken)], tenant: fixture.tenant)
            guard
                case .array(let providers)? = try lookup.json().value(at: ["users"]).flatMap({ users -> JSONValue? in
                    if case .array(let list) = users { list.first?.value(at: ["providerUserInfo"]) } else { nil }
                })
            else {
                Issue.record("no providerUserInfo: \(String(buffer: lookup.body))")
                return
            }
            #expect(providers.compactMap { $0.value(at: ["providerId"]) } == [.string("google.com")])
        }
    }

    @Test("a squatter's own trusted identity linked to the victim's address does not protect the squat")
    func squatterLinkDoesNotProve() async throws {
        try await FederationFixture.run { fixture in
            let gateway = fixture.gateway
            let squatter = try await gateway.signUp("victim@gmail.com", tenant: fixture.tenant)
            let linked = try await fixture.signIn(
                "google.com", idToken: fixture.idp.idToken(sub: "g-attacker", email: "attacker@gmail.com"),
                linkTo: squatter.idToken)
            #expect(linked.status == .ok, "\(String(buffer: linked.body))")
            // The owner signs in with Google: the squatted account is taken over, not joined.
            let (owner, _) = try await fixture.session("google.com", sub: "g-victim", email: "victim@gmail.com")
            #expect(owner.uid == squatter.uid)
            #expect(owner.claims.value(at: ["firebase", "identities", "google.com"]) == .array([.string("g-victim")]))
            #expect(try await gateway.refresh(try Session(linked.json()).refreshToken).errorMessage == "TOKEN_EXPIRED")
            let password = try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "victim@gmail.com", "password": "correct horse"], tenant: fixture.tenant)
            #expect(password.status == .badRequest)
            // The attacker's Google identity is free again: it signs in to an account of its own.
            let (attacker, _) = try await fixture.session("google.com", sub: "g-attacker", email: "attacker@gmail.com")
            #expect(attacker.uid != owner.uid)
        }
    }

    @Test("case 4: trusted, then trusted → both linked, nothing revoked")
    func trustedThenTrusted() async throws {
        try await FederationFixture.run { fixture in
            let (apple, _) = try await fixture.session("apple.com", sub: "ap-1", email: "kim@gmail.com")
            let (google, answer) = try await fixture.session("google.com", sub: "g-kim", email: "kim@gmail.com")
            #expect(google.uid == apple.uid)
            #expect(answer.value(at: ["isNewUser"]) == .bool(false))
            let identities = google.claims.value(at: ["firebase", "identities"])
            #expect(identities?.value(at: ["apple.com"]) == .array([.string("ap-1")]))
            #expect(identities?.value(at: ["google.com"]) == .array([.string("g-kim")]))
            // Case 4 revokes nothing.
            #expect(try await fixture.gateway.refresh(apple.refreshToken).status == .ok)
        }
    }

    @Test("explicit linking, the already-linked errors, unlinking and createAuthUri")
    func explicitLinking() async throws {
        try await FederationFixture.run { fixture in
            let gateway = fixture.gateway
            let tenant = fixture.tenant
            let alice = try await gateway.signUp("alice@example.com", tenant: tenant)
            let linked = try await fixture.signIn(
                "github.com", idToken: fixture.idp.idToken(sub: "gh-alice", email: "alice@example.com"), linkTo: alice.idToken)
            #expect(linked.status == .ok, "\(String(buffer: linked.body))")
            let session = try Session(linked.json())
            #expect(session.uid == alice.uid)
            #expect(session.claims.value(at: ["firebase", "identities", "github.com"]) == .array([.string("gh-alice")]))
            // Signing in with the linked identity reaches Alice.
            let (viaGitHub, _) = try await fixture.session("github.com", sub: "gh-alice", email: "alice@example.com")
            #expect(viaGitHub.uid == alice.uid)

            let bob = try await gateway.signUp("bob@example.com", tenant: tenant)
            let taken = try await fixture.signIn(
                "github.com", idToken: fixture.idp.idToken(sub: "gh-alice", email: "alice@example.com"), linkTo: bob.idToken)
            taken.expectEnvelope(.badRequest, "FEDERATED_USER_ID_ALREADY_LINKED")
            let emailTaken = try await fixture.signIn(
                "oidc.corp", idToken: fixture.idp.idToken(sub: "corp-x", email: "alice@example.com"), linkTo: bob.idToken)
            emailTaken.expectEnvelope(.badRequest, "EMAIL_EXISTS")

            let methods = try await gateway.endUser("accounts:createAuthUri", ["identifier": "alice@example.com"], tenant: tenant)
            #expect(try methods.json().value(at: ["signinMethods"]) == .array([.string("github.com"), .string("password")]))

            // A request refused for another field (a weak password) unlinks nothing.
            let refused = try await gateway.endUser(
                "accounts:update",
                ["idToken": .string(alice.idToken), "deleteProvider": .array(["github.com"]), "password": "x"], tenant: tenant)
            refused.expectEnvelope(.badRequest, "WEAK_PASSWORD")
            let still = try await gateway.endUser("accounts:createAuthUri", ["identifier": "alice@example.com"], tenant: tenant)
            #expect(try still.json().value(at: ["signinMethods"]) == .array([.string("github.com"), .string("password")]))

            let unlinked = try await gateway.endUser(
                "accounts:update", ["idToken": .string(alice.idToken), "deleteProvider": .array(["github.com"])], tenant: tenant)
            #expect(unlinked.status == .ok, "\(String(buffer: unlinked.body))")
            let after = try await gateway.endUser("accounts:createAuthUri", ["identifier": "alice@example.com"], tenant: tenant)
            #expect(try after.json().value(at: ["signinMethods"]) == .array([.string("password")]))
            let last = try await gateway.endUser(
                "accounts:update", ["idToken": .string(alice.idToken), "deleteProvider": .array(["password"])], tenant: tenant)
            last.expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            #expect(try await gateway.signIn("alice@example.com", tenant: tenant).uid == alice.uid)

            try await gateway.patchTenant(
                tenant, mask: "emailPrivacyConfig", #"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}}"#)
            let hidden = try await gateway.endUser("accounts:createAuthUri", ["identifier": "alice@example.com"], tenant: tenant)
            #expect(try hidden.json().value(at: ["signinMethods"]) == nil)
        }
    }
}
