import Foundation
import PortcullisClient
import PortcullisTestSupport
import Testing

/// The seed's listener events, in order, against the real daemon: initialisation with a
/// persisted user, refresh on expiry, reauthentication, a password change on another
/// device (sign-out), sign-in, sign-out.
@Suite("Client auth-state and ID-token events")
struct AuthEventTests {
    static let shortLivedTenant =
        #"{"displayName":"short","allowPasswordSignup":true,"enableAnonymousUser":true,"idTokenLifetimeSeconds":2,"scryptParameters":{"logN":10,"r":1,"p":1}}"#

    @Test("every event of the seed's list reaches both kinds of listener, in order")
    func seedEvents() async throws {
        try await ClientFixture.run(tenant: Self.shortLivedTenant) { fixture in
            let persistence = InMemoryPersistence()
            let first = try await fixture.auth(persistence: persistence).createUser(email: "ada@example.com", password: "first-pass")
            let uid = first.user.uid
            let persistedToken = try #require(await persistence.load(key: fixture.configuration().persistenceKey)).idToken

            // A new instance on the same store: its first event is the persisted user.
            let auth = fixture.auth(persistence: persistence)
            let states = EventRecorder(await auth.authStateChanges)
            let tokens = EventRecorder(await auth.idTokenChanges)
            #expect(try await states.wait { !$0.isEmpty } == [uid])
            #expect(try await tokens.wait { !$0.isEmpty }.first == uid)
            let user = try #require(await auth.currentUser)
            #expect(user.uid == uid && user.email == "ada@example.com")

            // The 2-second token is refreshed before it expires; the ID-token listeners hear it.
            let refreshed = try await tokens.wait { $0.count >= 2 }
            #expect(refreshed.count >= 2 && refreshed.allSatisfy { $0 == uid }, "\(refreshed)")
            #expect(try await user.idToken() != persistedToken)

            // Reauthentication: a new token with a later sign-in time, heard as a token event.
            let before = try await user.idTokenResult().authDate
            try await Task.sleep(for: .seconds(1.1))
            let heard = tokens.recorded.count
            try await user.reauthenticate(with: .emailPassword(email: "ada@example.com", password: "first-pass"))
            #expect(try await tokens.wait { $0.count > heard }.count > heard)
            #expect(try await user.idTokenResult().authDate > before)
            #expect(states.recorded == [uid], "a reauthentication is not a change of user")

            // Another device changes the password in a later second: this session is revoked,
            // and its next refresh signs it out.
            try await Task.sleep(for: .seconds(1.1))
            let other = fixture.auth()
            try await other.signIn(email: "ada@example.com", password: "first-pass")
            try await #require(await other.currentUser).updatePassword("second-pass")
            #expect(try await states.wait { $0.count >= 2 } == [uid, nil])
            #expect(try await tokens.wait { $0.last == .some(nil) }.last == .some(nil))
            #expect(await auth.currentUser == nil)
            #expect(await persistence.load(key: fixture.configuration().persistenceKey) == nil)

            // Signing in again, then out.
            try await auth.signIn(email: "ada@example.com", password: "second-pass")
            #expect(try await states.wait { $0.count >= 3 } == [uid, nil, uid])
            await auth.signOut()
            #expect(try await states.wait { $0.count >= 4 } == [uid, nil, uid, nil])
            let all = try await tokens.wait { $0.filter { $0 == nil }.count >= 2 }
            #expect(all.first == uid && all.last == .some(nil) && all.filter { $0 == nil }.count == 2, "\(all)")
            #expect(await persistence.load(key: fixture.configuration().persistenceKey) == nil)
        }
    }

    @Test("a listener that subscribes later hears the current state first, then only changes")
    func lateSubscriber() async throws {
        try await ClientFixture.run { fixture in
            let auth = fixture.auth()
            let early = EventRecorder(await auth.authStateChanges)
            #expect(try await early.wait { !$0.isEmpty } == [nil])
            let result = try await auth.signInAnonymously()
            #expect(result.isNewUser && result.user.isAnonymous)
            let late = EventRecorder(await auth.authStateChanges)
            #expect(try await late.wait { !$0.isEmpty } == [result.user.uid])
            #expect(try await early.wait { $0.count >= 2 } == [nil, result.user.uid])
            await auth.signOut()
            #expect(try await late.wait { $0.count >= 2 } == [result.user.uid, nil])
        }
    }
}
