import PortcullisCore
public import PortcullisStore
import Synchronization

/// Each instance's copy of users' revocation state (`validSince`, `disabled`),
/// for `checkRevoked` and end-user endpoints; dropped per user by NOTIFY.
public final class RevocationCache: InvalidationSubscriber {
    private struct Key: Hashable {
        let tenant: String
        let uid: String
    }

    private let users: UserRepository
    private let entries = Mutex<[Key: (validSince: Int64, disabled: Bool)?]>([:])
    static let capacity = 100_000

    /// A cache in front of the user table.
    public init(users: UserRepository) {
        self.users = users
    }

    /// `TOKEN_EXPIRED` when the session started before the user's `validSince`,
    /// `USER_DISABLED` for disabled users, `USER_NOT_FOUND` when deleted.
    public func check(tenantId: String?, uid: String, authTime: Int64) async throws {
        let key = Key(tenant: tenantId ?? "", uid: uid)
        let state: (validSince: Int64, disabled: Bool)?
        if let cached = entries.withLock({ $0[key] }) {
            state = cached
        } else {
            state = try await users.revocationState(tenantId: tenantId, uid: uid)
            entries.withLock { entries in
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
                entries[key] = .some(state)
            }
        }
        guard let state else { throw AuthError(.userNotFound) }
        try SessionPolicy.requireLive(authTime: authTime, validSince: state.validSince, disabled: state.disabled)
    }

    public func invalidate(_ event: InvalidationEvent) {
        switch event {
        case .user(let tenantId, let uid): entries.withLock { $0[Key(tenant: tenantId ?? "", uid: uid)] = nil }
        case .tenant(let id, let version) where version == 0:
            entries.withLock { $0 = $0.filter { $0.key.tenant != id } }
        default: return
        }
    }

    public func invalidateAll() {
        entries.withLock { $0.removeAll() }
    }
}
