public import Foundation

/// What an ``Auth`` keeps of its signed-in user between runs: enough to resume the
/// session (the refresh token) and to show the user before the network answers.
///
/// Never a password: a persisted user is resumed with its refresh token, which the
/// gateway can revoke.
public struct PersistedUser: Codable, Sendable, Equatable {
    /// The user's uid.
    public var uid: String
    /// The refresh token of the user's session.
    public var refreshToken: String
    /// The latest ID token, reused until it nears expiry.
    public var idToken: String
    /// When ``idToken`` expires.
    public var expirationDate: Date
    /// The profile as last seen.
    public var profile: UserProfile

    /// A persisted user.
    public init(uid: String, refreshToken: String, idToken: String, expirationDate: Date, profile: UserProfile) {
        self.uid = uid
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expirationDate = expirationDate
        self.profile = profile
    }
}

/// Where an ``Auth`` keeps its signed-in user: ``FilePersistence`` by default,
/// ``InMemoryPersistence`` for tests and for sessions that must not outlive the process.
public protocol AuthPersistence: Sendable {
    /// The user kept under `key`, if any.
    func load(key: String) async throws -> PersistedUser?
    /// Keeps `user` under `key`, replacing what was there.
    func save(_ user: PersistedUser, key: String) async throws
    /// Forgets what is kept under `key`.
    func remove(key: String) async throws
}

/// Keeps users in memory: gone with the process.
public actor InMemoryPersistence: AuthPersistence {
    private var users: [String: PersistedUser] = [:]

    /// An empty store.
    public init() {}

    /// The user kept under `key`, if any.
    public func load(key: String) -> PersistedUser? { users[key] }
    /// Keeps `user` under `key`.
    public func save(_ user: PersistedUser, key: String) { users[key] = user }
    /// Forgets what is kept under `key`.
    public func remove(key: String) { users[key] = nil }
}
