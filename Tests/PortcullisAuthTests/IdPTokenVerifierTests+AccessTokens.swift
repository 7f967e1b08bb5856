import PortcullisAuth
import PortcullisCore
import PortcullisJSON
import PortcullisOutbound
import PortcullisTestSupport
import Testing

/// Access tokens resolved at the user-info endpoint, in each provider's shape.
extension IdPTokenVerifierTests {
    // MARK: Access tokens

    @Test("an access token is resolved at the user-info endpoint; a rejected one is INVALID_IDP_RESPONSE")
    func accessToken() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            idp.setUserInfo(
                .object([
                    "sub": .string("oidc-9"), "email": .string("Someone@Example.com"), "email_verified": .string("false"),
                    "name": .string("Some One"), "picture": .string("https://example.com/p.png"),
                ]), forAccessToken: "good-token")
            let identity = try await rig.verifier.verify(
                FederatedCredential(providerId: "oidc.fake", accessToken: "good-token"), with: Self.provider(idp))
            #expect(identity.federatedId == "oidc-9" && identity.email == "someone@example.com")
            #expect(identity.emailVerifiedClaim == false && identity.displayName == "Some One")
            #expect(identity.photoURL == "https://example.com/p.png")
            let rejected = await Self.error {
                try await rig.verifier.verify(
                    FederatedCredential(providerId: "oidc.fake", accessToken: "bad-token"), with: Self.provider(idp))
            }
            Self.expectInvalid(rejected, "user info rejected the access token")
            #expect(rejected?.detail?.contains("bad-token") == false)
        }
    }

    @Test("user-info shapes: GitHub's numeric id and avatar_url, Facebook's picture.data.url, Google's verified_email")
    func userInfoShapes() async throws {
        try await FakeIdentityProvider.run { idp in
            let rig = Rig()
            idp.setUserInfo(
                .object(["id": .integer(583231), "login": .string("octocat"), "avatar_url": .string("https://a/o.png"), "email": .null]),
                forAccessToken: "gh")
            let github = IdentityProvider(providerId: "github.com", clientId: "gh-client", userInfoURI: idp.userInfoURL)
            let octocat = try await rig.verifier.verify(FederatedCredential(providerId: "github.com", accessToken: "gh"), with: github)
            #expect(octocat.federatedId == "583231" && octocat.photoURL == "https://a/o.png" && octocat.email == nil)

            idp.setUserInfo(
                .object([
                    "id": .string("10158"), "name": .string("F B"),
                    "picture": .object(["data": .object(["url": .string("https://fb/p.jpg")])]),
                ]), forAccessToken: "fb")
            let facebook = IdentityProvider(providerId: "facebook.com", clientId: "fb-client", userInfoURI: idp.userInfoURL)
            let fbUser = try await rig.verifier.verify(FederatedCredential(providerId: "facebook.com", accessToken: "fb"), with: facebook)
            #expect(fbUser.federatedId == "10158" && fbUser.photoURL == "https://fb/p.jpg")

            idp.setUserInfo(.object(["id": .string("g-1"), "verified_email": .bool(true)]), forAccessToken: "g")
            let google = Self.provider(idp, id: "google.com")
            let googleUser = try await rig.verifier.verify(FederatedCredential(providerId: "google.com", accessToken: "g"), with: google)
            #expect(googleUser.emailVerifiedClaim == true)

            idp.setUserInfo(.object(["name": .string("nobody")]), forAccessToken: "anon")
            Self.expectInvalid(
                await Self.error {
                    try await rig.verifier.verify(
                        FederatedCredential(providerId: "oidc.fake", accessToken: "anon"), with: Self.provider(idp))
                }, "no id")
        }
    }
}
