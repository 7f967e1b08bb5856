public import PortcullisCore
import Synchronization

/// Each instance's in-memory copy of tenant settings and project config.
///
/// Reads are a lookup under a mutex: the hot paths never wait on PostgreSQL once a tenant
/// is cached. Tenants are loaded on first use and kept least-recently-used within their share
/// of `cache.tenant_bytes` (``TenantCacheBudget``); an evicted tenant reloads on its next
/// request. Entries are dropped by ``InvalidationEvent``s: this instance's own as its writes
/// commit (so it sees its own change on the very next request), the others' from the
/// listener. Unknown tenant ids are cached as absent, apart and bounded in number, so a flood
/// of them can neither reach the database nor evict the tenants that exist.
public final class TenantSettingsCache: InvalidationSubscriber {
    /// A cached tenant; not `current` once a full flush kept it as last known.
    private struct Slot {
        var tenant: Tenant
        var current: Bool
    }

    private struct State {
        var tenants: LeastRecentlyUsed<String, Slot>
        var absent = LeastRecentlyUsed<String, Void>(limit: TenantSettingsCache.maximumAbsentEntries)
        var project: ProjectConfig?
        /// Bumped by every full flush; a load that started before one is not stored.
        var generation: UInt64 = 0
        /// The newest version an event announced for each tenant (`Int64.max`: deleted) since
        /// the last full flush, and for the project config: a load is stored when nothing was
        /// announced for it while it ran, or when it read that version or a newer one. A load
        /// that read older data than a change announced meanwhile is not stored; one that read
        /// the change is, whatever else was invalidated meanwhile.
        var announced: [String: Int64] = [:]
        var projectAnnounced: Int64 = 0
        /// What the last full flush dropped of the project config, served only when a load
        /// fails with `UNAVAILABLE` (a tenant's stays in its slot; see `GuardedCache`).
        var lastKnownProject: ProjectConfig?
    }

    /// Bound on cached "no such tenant" answers.
    static let maximumAbsentEntries = 10_000

    private let state: Mutex<State>
    private let tenants: TenantRepository
    private let projectConfig: ProjectConfigRepository
    private let metrics: CacheMetrics

    /// A cache in front of the two repositories, holding tenants whose ``cost(of:)`` adds up to
    /// at most `limit` bytes.
    public init(
        tenants: TenantRepository, projectConfig: ProjectConfigRepository, limit: Int = TenantCacheBudget().settings,
        metrics: CacheMetrics = .none
    ) {
        self.tenants = tenants
        self.projectConfig = projectConfig
        self.state = Mutex(State(tenants: LeastRecentlyUsed(limit: limit)))
        self.metrics = metrics
    }

    /// About the heap a cached tenant holds: the settings' fixed fields, then what grows with
    /// them (strings, domain lists, a delivery channel).
    public static func cost(of tenant: Tenant) -> Int {
        let settings = tenant.settings
        var bytes = 1_536 + tenant.id.utf8.count + (settings.displayName?.utf8.count ?? 0)
        bytes += settings.authorizedDomains.reduce(0) { $0 + 48 + $1.utf8.count }
        bytes += settings.trustedEmailDomains.reduce(0) { $0 + 96 + $1.domain.utf8.count + $1.tenantIds.count * 48 }
        if settings.emailDelivery != nil { bytes += 512 }
        return bytes
    }

    /// The tenant's current settings if this instance holds them, leaving the eviction order alone.
    public func cached(id: String) -> Tenant? {
        state.withLock { state in state.tenants.peek(id).flatMap { $0.current ? $0.tenant : nil } }
    }

    /// The tenant, from memory when cached; `nil` when it does not exist.
    public func tenant(id: String) async throws -> Tenant? {
        let (cached, generation, announced) = state.withLock { state -> (Tenant??, UInt64, Int64?) in
            if let slot = state.tenants.value(for: id), slot.current { return (.some(slot.tenant), 0, nil) }
            if state.absent.value(for: id) != nil { return (.some(nil), 0, nil) }
            return (nil, state.generation, state.announced[id])
        }
        if let cached {
            metrics.recordHit()
            return cached
        }
        metrics.recordMiss()
        let loaded: Tenant?
        do {
            loaded = try await tenants.find(id: id)
        } catch let error as AuthError where error.code == .unavailable {
            guard let lastKnown = state.withLock({ $0.tenants.peek(id)?.tenant }) else { throw error }
            return lastKnown
        }
        state.withLock { state in
            let newest = state.announced[id]
            guard state.generation == generation,
                newest == announced || (loaded.map { $0.version >= newest ?? 0 } ?? false)
            else {
                // Not stored; a last-known copy older than what was loaded must not outlive the load.
                if state.tenants.peek(id)?.current == false { state.tenants.removeValue(for: id) }
                return
            }
            if let loaded {
                let evicted = state.tenants.insert(Slot(tenant: loaded, current: true), for: id, cost: Self.cost(of: loaded))
                metrics.recordEvictions(evicted)
            } else {
                state.tenants.removeValue(for: id)
                state.absent.insert((), for: id, cost: 1)
            }
            metrics.record(state.tenants)
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
                state.absent.removeValue(for: id)
                // An echo (our own commit's, then the listener's): the cached copy is already this version.
                if let slot = state.tenants.peek(id), slot.current, slot.tenant.version >= announced { return }
                state.tenants.removeValue(for: id)
                metrics.record(state.tenants)
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
            state.tenants.update { _, slot in Slot(tenant: slot.tenant, current: false) }
            state.lastKnownProject = state.project ?? state.lastKnownProject
            state.project = nil
            state.absent.removeAll()
            // Loads that began before the flush are refused by the generation already.
            state.announced = [:]
        }
    }
}
