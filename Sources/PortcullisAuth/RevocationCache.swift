public import PortcullisCore
public import PortcullisStore

/// Each instance's copy of users' revocation state (`validSince`, `disabled`),
/// for `checkRevoked` and end-user endpoints; dropped per user by invalidation events
/// (this instance's as its writes commit, the others' by NOTIFY).
public final class RevocationCache: InvalidationSubscriber {
    private struct Key: Hashable {
        let tenant: String
        let uid: String
    }

    /// What `checkRevoked` needs of a user; `nil` in the cache: the user does not exist.
    private struct State {
        let validSince: Timestamp
        let disabled: Bool
    }

    private let users: UserRepository
    private let entries = GuardedCache<Key, State?>(limit: 100_000)

    /// A cache in front of the user table.
    public init(users: UserRepository) {
        self.users = users
    }

    /// `TOKEN_EXPIRED` when the session started before the user's `validSince`,
    /// `USER_DISABLED` for disabled users, `USER_NOT_FOUND` when deleted.
    public func check(tenant: TenantScope, uid: String, authTime: Int64) async throws {
        let state = try await entries.value(for: Key(tenant: tenant.key, uid: uid)) {
            try await users.revocationState(tenant: tenant, uid: uid).map { State(validSince: $0.validSince, disabled: $0.disabled) }
        }
        guard let state else { throw AuthError(.userNotFound) }
        try SessionPolicy.requireLive(authTime: authTime, validSince: state.validSince, disabled: state.disabled)
    }

    public func invalidate(_ event: InvalidationEvent) {
        switch event {
        case .user(let tenant, let uid): entries.invalidate(Key(tenant: tenant.key, uid: uid))
        case .tenant(let id, let version) where version == 0: entries.invalidate { $0.tenant == id }
        default: return
        }
    }

    public func invalidateAll() {
        entries.invalidateAll()
    }
}
