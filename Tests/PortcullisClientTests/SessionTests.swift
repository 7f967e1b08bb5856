import Foundation
import PortcullisClient
import PortcullisTestSupport
import Testing

/// Tokens and users: single-flight refresh, several users side by side, users that
/// outlive their sign-out, profiles refreshed from changes made elsewhere.
@Suite("Client sessions")
struct SessionTests {
    @Test("50 concurrent idToken() calls on an expiring token make one refresh request, and all get its token")
    func singleFlightRefresh() async throws {
        try await ClientFixture.run(tenant: AuthEventTests.shortLivedTenant) { fixture in
            // No listener: nothing refreshes proactively, so the only refresh is the one tested.
            let user = try await fixture.auth().createUser(email: "flight@example.com", password: "flight-pass").user
            let stale = try await user.idToken()
            try await Task.sleep(for: .seconds(1.2))  // past half of the 2-second lifetime
            let before = try await fixture.gateway.requestCount(route: "/v1/token")
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await user.idToken() } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            let after = try await fixture.gateway.requestCount(route: "/v1/token")
            #expect(after - before == 1, "refresh requests: \(after - before)")
            #expect(Set(tokens).count == 1 && tokens.first != stale)
        }
    }

    @Test("two users of two Auth instances side by side; a user stays usable after its sign-out")
    func twoUsers() async throws {
        try await ClientFixture.run { fixture in
            let (auth1, auth2) = (fixture.auth(), fixture.auth())
            let ada = try await auth1.createUser(email: "ada@example.com", password: "ada-password").user
            let bob = try await auth2.createUser(email: "bob@example.com", password: "bob-password").user
            try await ada.updateProfile(displayName: .set("Ada"))
            try await bob.updateProfile(displayName: .set("Bob"), photoURL: .set("https://example.com/bob.png"))
            #expect(ada.displayName == "Ada" && bob.displayName == "Bob" && bob.photoURL == "https://example.com/bob.png")
            #expect(try await ada.idTokenResult().tenantId == fixture.tenant)
            let (current1, current2) = (await auth1.currentUser, await auth2.currentUser)
            #expect(current1?.uid == ada.uid && current2?.uid == bob.uid)

            await auth1.signOut()
            #expect(await auth1.currentUser == nil)
            // Ada's User keeps its own session: it refreshes and calls the gateway.
            let refreshed = try await ada.idToken(forceRefresh: true)
            #expect(!refreshed.isEmpty)
            try await ada.updateProfile(displayName: .remove)
            #expect(ada.displayName == nil)
            #expect(await auth1.currentUser == nil, "a signed-out user's activity does not sign it back in")
        }
    }

    @Test("reload picks up changes made elsewhere: an administrator's verification and a new display name")
    func reloadSeesOtherDevices() async throws {
        try await ClientFixture.run { fixture in
            let user = try await fixture.auth().createUser(email: "remote@example.com", password: "remote-pass").user
            #expect(!user.isEmailVerified && user.providerData.map(\.providerId) == ["password"])
            let elsewhere = try await fixture.auth().signIn(email: "remote@example.com", password: "remote-pass").user
            try await elsewhere.updateProfile(displayName: .set("Set Elsewhere"))
            try await fixture.adminUpdate(user.uid, #""emailVerified":true"#)
            #expect(user.displayName == nil)
            try await user.reload()
            #expect(user.displayName == "Set Elsewhere" && user.isEmailVerified)
        }
    }

    @Test("an anonymous user links a password, keeps its uid, and signs in with it; unlinking the last way in is refused")
    func linkAndUnlink() async throws {
        try await ClientFixture.run { fixture in
            let auth = fixture.auth()
            let guest = try await auth.signInAnonymously().user
            #expect(guest.isAnonymous)
            try await guest.link(with: .emailPassword(email: "guest@example.com", password: "guest-pass"))
            #expect(!guest.isAnonymous && guest.email == "guest@example.com")
            #expect(guest.providerData.map(\.providerId) == ["password"])
            let again = try await fixture.auth().signIn(email: "guest@example.com", password: "guest-pass")
            #expect(again.user.uid == guest.uid)
            #expect(await clientError { try await guest.unlink("google.com") }?.code == .noSuchProvider)
            let last = await clientError { try await guest.unlink("password") }
            #expect(last != nil, "the last way in stays")
        }
    }

    @Test("email actions: a verification link is sent through the tenant's channel; a reset for an unknown email is userNotFound")
    func emailActions() async throws {
        try await ClientFixture.run { fixture in
            let auth = fixture.auth()
            let user = try await auth.createUser(email: "verify@example.com", password: "verify-pass").user
            try await user.sendEmailVerification()
            try await auth.sendPasswordReset(email: "verify@example.com")
            #expect(await clientError { try await auth.sendPasswordReset(email: "nobody@example.com") }?.code == .userNotFound)
            #expect(await clientError { try await auth.applyActionCode("not-a-code") }?.code == .invalidActionCode)
            #expect(
                await clientError { try await auth.confirmPasswordReset(code: "not-a-code", newPassword: "whatever-pass") }?.code
                    == .invalidActionCode)
        }
    }
}
