import Foundation
import PortcullisClient
import PortcullisTestSupport
import Testing

/// The signed-in user kept between runs: a 0600 file per (project, tenant, API key),
/// replaced atomically, holding the refresh token and profile and never a password.
@Suite("Client persistence")
struct PersistenceTests {
    static func temporaryDirectory() -> URL {
        URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("portcullis-client-\(UUID().uuidString)")
    }

    @Test("a new Auth on the same files resumes the user; the file is 0600 in a 0700 directory and holds no password")
    func resumesFromFile() async throws {
        try await ClientFixture.run { fixture in
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = FilePersistence(directory: directory)
            let signedIn = try await fixture.auth(persistence: store).createUser(email: "file@example.com", password: "file-password-9")
            let file = store.file(for: fixture.configuration().persistenceKey)
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let folder = try FileManager.default.attributesOfItem(atPath: directory.path)
            #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
            let contents = try String(contentsOf: file, encoding: .utf8)
            #expect(!contents.contains("file-password-9") && contents.contains("refreshToken") && contents.contains("file@example.com"))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty)

            let resumed = try #require(await fixture.auth(persistence: FilePersistence(directory: directory)).currentUser)
            #expect(resumed.uid == signedIn.user.uid && resumed.email == "file@example.com")
            try await resumed.reload()
            #expect(try await resumed.idToken(forceRefresh: true) != "")

            // Another tenant (or API key, or project) has a file of its own.
            let other = fixture.configuration(persistence: store, tenant: .some(nil))
            #expect(other.persistenceKey != fixture.configuration().persistenceKey)
            #expect(await Auth(configuration: other).currentUser == nil)
        }
    }

    @Test("two Auths on one file: each takes up the other's sign-in, refreshed tokens and sign-out when it syncs")
    func syncsWithOtherInstances() async throws {
        try await ClientFixture.run { fixture in
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = fixture.auth(persistence: FilePersistence(directory: directory))
            let second = fixture.auth(persistence: FilePersistence(directory: directory))
            #expect(await second.currentUser == nil)
            var states = await second.authStateChanges.makeAsyncIterator()
            #expect(await states.next().map { $0 == nil } == true)

            let signedIn = try await first.createUser(email: "sync@example.com", password: "sync-password-9").user
            await second.syncWithPersistence()
            #expect(await second.currentUser?.uid == signedIn.uid)
            #expect(await states.next()??.uid == signedIn.uid)

            // The first refreshes (rotating the refresh token): the second takes up the new tokens.
            let refreshed = try await signedIn.idToken(forceRefresh: true)
            await second.syncWithPersistence()
            let adopted = try #require(await second.currentUser)
            #expect(try await adopted.idToken() == refreshed)

            await first.signOut()
            await second.syncWithPersistence()
            #expect(await second.currentUser == nil)
            #expect(await states.next().map { $0 == nil } == true)
        }
    }

    @Test("file names keep distinct (project, tenant, API key) triples apart and cannot leave the directory")
    func fileNames() {
        func key(_ project: String, _ tenant: String?, _ apiKey: String) -> String {
            AuthConfiguration(baseURL: "http://x", apiKey: apiKey, projectId: project, tenantId: tenant, persistence: InMemoryPersistence())
                .persistenceKey
        }
        let keys = [
            key("p", "t", "k"), key("p", nil, "k"), key("p", "t", "k2"), key("p.t", nil, "k"), key("p_2Et", nil, "k"), key("p", "-", "k"),
        ]
        #expect(Set(keys).count == keys.count, "\(keys)")
        let hostile = key("../../etc", "a/b", "k")
        #expect(!hostile.contains("/") && !hostile.contains(".."))
    }

    @Test("50 concurrent saves leave one whole, decodable file")
    func atomicReplace() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FilePersistence(directory: directory)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let profile = UserProfile(
                        uid: "u", email: "u\(index)@example.com", displayName: String(repeating: "x", count: index * 100))
                    try await store.save(
                        PersistedUser(uid: "u", refreshToken: "r\(index)", idToken: "i", expirationDate: Date(), profile: profile), key: "k"
                    )
                }
            }
            try await group.waitForAll()
        }
        let loaded = try #require(try await store.load(key: "k"))
        #expect(loaded.profile.email == "u\(loaded.refreshToken.dropFirst())@example.com")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["k.json"])
        try await store.remove(key: "k")
        #expect(try await store.load(key: "k") == nil)
    }
}
