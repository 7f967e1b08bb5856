import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

@Suite("signInWithIdp")
struct FederatedSignInTests {
    @Test("a new identity creates a user from the IdP's profile; the next sign-in finds it")
    func signUpThenSignIn() async throws {
        try await FederationFixture.run { fixture in
            let (first, answer) = try await fixture.session("google.com", sub: "g-1", email: "Ada@Gmail.com", name: "Ada")
            #expect(answer.value(at: ["isNewUser"]) == .bool(true))
            #expect(answer.value(at: ["federatedId"]) == .string("g-1"))
            #expect(answer.value(at: ["providerId"]) == .string("google.com"))
            #expect(answer.value(at: ["email"]) == .string("ada@gmail.com"))
            #expect(answer.value(at: ["emailVerified"]) == .bool(true))
            #expect(answer.value(at: ["displayName"]) == .string("Ada"))
            #expect(answer.value(at: ["kind"]) == .string("identitytoolkit#VerifyAssertionResponse"))
            guard case .string(let raw)? = answer.value(at: ["rawUserInfo"]) else {
                Issue.record("no rawUserInfo")
                return
            }
            #expect(try JSONValue.parse(Array(raw.utf8)).value(at: ["sub"]) == .string("g-1"))
            let claims = first.claims
            #expect(claims.value(at: ["firebase", "sign_in_provider"]) == .string("google.com"))
            #expect(claims.value(at: ["firebase", "identities", "google.com"]) == .array([.string("g-1")]))
            #expect(claims.value(at: ["firebase", "tenant"]) == .string(fixture.tenant))
            #expect(claims.value(at: ["email_verified"]) == .bool(true))

            let (second, again) = try await fixture.session("google.com", sub: "g-1", email: "ada@gmail.com")
            #expect(again.value(at: ["isNewUser"]) == .bool(false))
            #expect(second.uid == first.uid)
            // The refresh token of a federated session works like any other.
            #expect(try await fixture.gateway.refresh(second.refreshToken).status == .ok)
        }
    }

    @Test("an access token is resolved through the provider's user-info endpoint")
    func accessToken() async throws {
        try await FederationFixture.run { fixture in
            fixture.idp.setUserInfo(
                .object([
                    "id": .integer(4242), "login": "octo", "name": "Octo Cat", "email": "octo@example.com",
                    "avatar_url": "https://avatars.example/octo.png",
                ]), forAccessToken: "gh-token-1")
            let response = try await fixture.signIn("github.com", accessToken: "gh-token-1")
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let json = try response.json()
            #expect(json.value(at: ["federatedId"]) == .string("4242"))
            #expect(json.value(at: ["email"]) == .string("octo@example.com"))
            // GitHub is never trusted for an email, whatever it says.
            #expect(json.value(at: ["emailVerified"]) == .bool(false))
            #expect(json.value(at: ["photoUrl"]) == .string("https://avatars.example/octo.png"))
            let rejected = try await fixture.signIn("github.com", accessToken: "not-a-token")
            rejected.expectEnvelope(.badRequest, "INVALID_IDP_RESPONSE")
        }
    }

    @Test("forged and foreign IdP tokens are INVALID_IDP_RESPONSE, never tokens")
    func forgedTokens() async throws {
        try await FederationFixture.run { fixture in
            let idp = fixture.idp
            let forgeries: [(String, String)] = [
                ("wrong audience", idp.idToken(audience: .string("someone-elses-client"))),
                ("wrong issuer", idp.idToken(issuer: "https://evil.example")),
                ("expired", idp.idToken(expiresIn: 3600, issuedAt: Timestamp(seconds: SystemClock().now().seconds - 7200))),
                ("unknown key", idp.idTokenSignedWithUnpublishedKey(kid: "forged-kid")),
                (
                    "alg none",
                    FakeIdentityProvider.rawToken(
                        header: ["alg": "none", "kid": .string(idp.currentKid)],
                        claims: FakeIdentityProvider.claims(of: idp.idToken()), signature: [])
                ),
                (
                    "HS256 with the public key",
                    FakeIdentityProvider.hs256Token(
                        claims: FakeIdentityProvider.claims(of: idp.idToken()), kid: idp.currentKid, secret: idp.publicKeyPEM)
                ),
                ("garbage", "not.a.jwt"),
            ]
            for (name, token) in forgeries {
                let response = try await fixture.signIn("google.com", idToken: token)
                #expect(response.status == .badRequest, "\(name): \(String(buffer: response.body))")
                #expect(response.errorMessage?.hasPrefix("INVALID_IDP_RESPONSE") == true, "\(name): \(response.errorMessage ?? "")")
                #expect(try response.json().value(at: ["idToken"]) == nil)
            }
            let notConfigured = try await fixture.signIn("yahoo.com", idToken: idp.idToken())
            notConfigured.expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED")
            try await fixture.gateway.send(
                .patch,
                "/v2/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/defaultSupportedIdpConfigs/apple.com?updateMask=enabled",
                json: #"{"enabled":false}"#)
            let disabled = try await fixture.signIn("apple.com", idToken: idp.idToken())
            disabled.expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED")
            let noBody = try await fixture.gateway.endUser(
                "accounts:signInWithIdp", ["requestUri": "http://localhost"], tenant: fixture.tenant)
            noBody.expectEnvelope(.badRequest, "INVALID_IDP_RESPONSE")
        }
    }

    @Test("with self sign-up off a new identity is ADMIN_ONLY_OPERATION; existing users still sign in")
    func signUpRestriction() async throws {
        try await FederationFixture.run { fixture in
            let (existing, _) = try await fixture.session("apple.com", sub: "a-1", email: "a1@example.com")
            try await fixture.gateway.patchTenant(
                fixture.tenant, mask: "client.permissions", #"{"client":{"permissions":{"disabledUserSignup":true}}}"#)
            let newcomer = try await fixture.signIn("apple.com", idToken: fixture.idp.idToken(sub: "a-2", email: "a2@example.com"))
            newcomer.expectEnvelope(.badRequest, "ADMIN_ONLY_OPERATION")
            let (again, _) = try await fixture.session("apple.com", sub: "a-1", email: "a1@example.com")
            #expect(again.uid == existing.uid)
        }
    }

    @Test("concurrent first sign-ins of one identity create one user")
    func concurrentFirstSignIns() async throws {
        try await FederationFixture.run { fixture in
            let token = fixture.idp.idToken(sub: "racer", email: "racer@gmail.com")
            let uids = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await fixture.signIn("google.com", idToken: token)
                        guard response.status == .ok, case .string(let uid)? = try response.json().value(at: ["localId"]) else {
                            Issue.record("a racing sign-in failed: \(String(buffer: response.body))")
                            return nil
                        }
                        return uid
                    }
                }
                var uids: [String] = []
                for try await uid in group { if let uid { uids.append(uid) } }
                return uids
            }
            #expect(uids.count == 20)
            #expect(Set(uids).count == 1)
        }
    }

    @Test("a provider on a private address is refused unless the operator allows its network")
    func networkPolicy() async throws {
        try await FederationFixture.run(allowLoopback: false) { fixture in
            let started = ContinuousClock.now
            let response = try await fixture.signIn("google.com", idToken: fixture.idp.idToken())
            response.expectEnvelope(.badRequest, "INVALID_IDP_RESPONSE")
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(fixture.idp.jwksFetches == 0)
        }
    }

    @Test("a JWKS endpoint that never answers fails the sign-in within seconds")
    func hangingJWKS() async throws {
        try await FederationFixture.run { fixture in
            try await fixture.configure("oidc.hang", jwksURI: fixture.idp.baseURL + "/hang")
            let started = ContinuousClock.now
            let response = try await fixture.signIn("oidc.hang", idToken: fixture.idp.idToken())
            let elapsed = ContinuousClock.now - started
            response.expectEnvelope(.badRequest, "INVALID_IDP_RESPONSE")
            #expect(elapsed < .seconds(15), "took \(elapsed)")
        }
    }
}
