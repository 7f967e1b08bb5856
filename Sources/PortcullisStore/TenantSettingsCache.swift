public import PortcullisCore
import Synchronization

/// Each instance's in-memory copy of tenant settings and project config.
///
/// Reads are a dictionary lookup under a mutex: the hot paths never wait on
/// PostgreSQL once a tenant is cached. Entries are dropped by
/// ``InvalidationEvent``s: this instance's own as its writes commit (so it sees its own
/// change on the very next request), the others' from the listener. Unknown tenant ids
/// are cached as absent so a flood of them cannot reach the database.
public final class TenantSettingsCache: InvalidationSubscriber {
    private enum Entry {
        case present(Tenant)
        case absent
    }

    private struct State {
        var tenants: [String: Entry] = [:]
        var project: ProjectConfig?
        var absentCount = 0
        /// Bumped by every invalidation; a load that started before one is not stored.
        var generation: UInt64 = 0
    }

    /// Bound on cached "no such tenant" answers.
    static let maximumAbsentEntries = 10_000

    private let state = Mutex(State())
    private let tenants: TenantRepository
    private let projectConfig: ProjectConfigRepository

    /// A cache in front of the two repositories.
    public init(tenants: TenantRepository, projectConfig: ProjectConfigRepository) {
        self.tenants = tenants
        self.projectConfig = projectConfig
    }

    /// The tenant, from memory when cached; `nil` when it does not exist.
    public func tenant(id: String) async throws -> Tenant? {
        let (cached, generation) = state.withLock { ($0.tenants[id], $0.generation) }
        switch cached {
        case .present(let tenant): return tenant
        case .absent: return nil
        case nil: break
        }
        let loaded = try await tenants.find(id: id)
        state.withLock { state in
            guard state.generation == generation else { return }
            if let loaded {
                state.tenants[id] = .present(loaded)
            } else {
                if state.absentCount >= Self.maximumAbsentEntries {
                    state.tenants = state.tenants.filter { if case .present = $0.value { true } else { false } }
                    state.absentCount = 0
                }
                state.tenants[id] = .absent
                state.absentCount += 1
            }
        }
        return loaded
    }

    /// The project's own config, from memory when cached.
    public func project() async throws -> ProjectConfig {
        let (cached, generation) = state.withLock { ($0.project, $0.generation) }
        if let cached { return cached }
        let loaded = try await projectConfig.get()
        state.withLock { state in
            if state.generation == generation { state.project = loaded }
        }
        return loaded
    }

    /// The settings that govern `tenantId`'s users (`nil` = project users);
    /// `TENANT_NOT_FOUND` when the tenant does not exist.
    public func settings(tenantId: String?) async throws -> TenantSettings {
        guard let tenantId else { return try await project().settings }
        guard TenantID.isValid(tenantId), let tenant = try await tenant(id: tenantId) else {
            throw AuthError(.tenantNotFound)
        }
        return tenant.settings
    }

    public func invalidate(_ event: InvalidationEvent) {
        state.withLock { state in
            switch event {
            case .tenant(let id, let version):
                // An echo (our own commit's, then the listener's): the cached copy is already this version.
                if case .present(let cached) = state.tenants[id], version != 0, cached.version >= version { return }
                state.generation &+= 1
                if case .absent = state.tenants[id] { state.absentCount -= 1 }
                state.tenants[id] = nil
            case .projectConfig(let version):
                if let cached = state.project, cached.version >= version { return }
                state.generation &+= 1
                state.project = nil
            case .signingKeys, .user, .identityProviders, .serviceAccounts:
                return
            }
        }
    }

    /// Forward auth verifies with it through a database outage.
    public var keptThroughOutage: Bool { true }

    public func invalidateAll() {
        state.withLock { state in
            state.generation &+= 1
            state.tenants = [:]
            state.project = nil
            state.absentCount = 0
        }
    }
}
