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
        /// Bumped by every full flush; a load that started before one is not stored.
        var generation: UInt64 = 0
        /// The newest version an event announced for each tenant (`Int64.max`: deleted), and
        /// for the project config: a load is stored when nothing was announced for it while it
        /// ran, or when it read that version or a newer one. A load that read older data
        /// than a change announced meanwhile is not stored; one that read the change is,
        /// whatever else was invalidated meanwhile.
        var announced: [String: Int64] = [:]
        var projectAnnounced: Int64 = 0
        /// What the last full flush dropped, served only when a load fails with `UNAVAILABLE`
        /// (see `GuardedCache`); an event naming an entry drops it here too.
        var lastKnown: [String: Tenant] = [:]
        var lastKnownProject: ProjectConfig?
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
        let (cached, generation, announced) = state.withLock { ($0.tenants[id], $0.generation, $0.announced[id]) }
        switch cached {
        case .present(let tenant): return tenant
        case .absent: return nil
        case nil: break
        }
        let loaded: Tenant?
        do {
            loaded = try await tenants.find(id: id)
        } catch let error as AuthError where error.code == .unavailable {
            guard let lastKnown = state.withLock({ $0.lastKnown[id] }) else { throw error }
            return lastKnown
        }
        state.withLock { state in
            state.lastKnown[id] = nil
            guard state.generation == generation else { return }
            let newest = state.announced[id]
            guard newest == announced || (loaded.map { $0.version >= newest ?? 0 } ?? false) else { return }
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
        let (cached, generation, announced) = state.withLock { ($0.project, $0.generation, $0.projectAnnounced) }
        if let cached { return cached }
        let loaded: ProjectConfig
        do {
            loaded = try await projectConfig.get()
        } catch let error as AuthError where error.code == .unavailable {
            guard let lastKnown = state.withLock({ $0.lastKnownProject }) else { throw error }
            return lastKnown
        }
        state.withLock { state in
            state.lastKnownProject = nil
            guard state.generation == generation,
                state.projectAnnounced == announced || loaded.version >= state.projectAnnounced
            else { return }
            state.project = loaded
        }
        return loaded
    }

    /// The settings that govern the scope's users; `TENANT_NOT_FOUND` when the tenant does not exist.
    public func settings(tenant scope: TenantScope) async throws -> TenantSettings {
        guard case .tenant(let id) = scope else { return try await project().settings }
        guard TenantID.isValid(id), let tenant = try await tenant(id: id) else { throw AuthError(.tenantNotFound) }
        return tenant.settings
    }

    public func invalidate(_ event: InvalidationEvent) {
        state.withLock { state in
            switch event {
            case .tenant(let id, let version):
                let announced = version == 0 ? Int64.max : version
                state.announced[id] = max(state.announced[id] ?? 0, announced)
                state.lastKnown[id] = nil
                // An echo (our own commit's, then the listener's): the cached copy is already this version.
                if case .present(let cached) = state.tenants[id], cached.version >= announced { return }
                if case .absent = state.tenants[id] { state.absentCount -= 1 }
                state.tenants[id] = nil
            case .projectConfig(let version):
                state.projectAnnounced = max(state.projectAnnounced, version)
                state.lastKnownProject = nil
                if let cached = state.project, cached.version >= version { return }
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
            // Kept as last known: a flush just before an outage must not leave forward auth
            // without settings for it.
            for case (let id, .present(let tenant)) in state.tenants { state.lastKnown[id] = tenant }
            state.lastKnownProject = state.project ?? state.lastKnownProject
            state.tenants = [:]
            state.project = nil
            state.absentCount = 0
            // Loads that began before the flush are refused by the generation already.
            state.announced = [:]
        }
    }
}
