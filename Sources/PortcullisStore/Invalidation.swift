public import PortcullisCore
import Synchronization

/// A change every instance's caches must hear about, announced by the transaction that
/// makes it (``Transaction``): to other instances with `pg_notify` (delivered only if it
/// commits), to this instance's own subscribers when it commits.
public enum InvalidationEvent: Sendable, Equatable {
    /// A tenant was created, changed or deleted; `version` is its new version (0 when deleted).
    case tenant(id: String, version: Int64)
    /// The project config changed.
    case projectConfig(version: Int64)
    /// A tenant's (or the project users') signing keys changed.
    case signingKeys(TenantScope)
    /// A user's revocation watermark or disabled flag changed.
    case user(TenantScope, uid: String)
    /// A tenant's (or the project users') identity-provider configurations changed.
    case identityProviders(TenantScope)
    /// A tenant's (or the project users') custom-token service accounts changed.
    case serviceAccounts(TenantScope)

    /// The one channel every instance listens on.
    public static let channel = "portcullis_invalidation"

    /// The NOTIFY payload: `tenant:<version>:<id>`, `project:<version>`, `keys:0:<tenant>`,
    /// `idp:0:<tenant>`, `sa:0:<tenant>`, `user:<tenant>:<uid>`.
    public var payload: String {
        switch self {
        case .tenant(let id, let version): "tenant:\(version):\(id)"
        case .projectConfig(let version): "project:\(version)"
        case .signingKeys(let tenant): "keys:0:\(tenant.key)"
        case .user(let tenant, let uid): "user:\(tenant.key):\(uid)"
        case .identityProviders(let tenant): "idp:0:\(tenant.key)"
        case .serviceAccounts(let tenant): "sa:0:\(tenant.key)"
        }
    }

    /// Parses a payload; `nil` for anything unknown (ignored, never fatal).
    public init?(payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        if parts[0] == "user", parts.count == 3 {
            self = .user(TenantScope(String(parts[1])), uid: String(parts[2]))
            return
        }
        guard let version = Int64(parts[1]) else { return nil }
        switch parts[0] {
        case "keys" where parts.count == 3: self = .signingKeys(TenantScope(String(parts[2])))
        case "idp" where parts.count == 3: self = .identityProviders(TenantScope(String(parts[2])))
        case "sa" where parts.count == 3: self = .serviceAccounts(TenantScope(String(parts[2])))
        case "tenant" where parts.count == 3: self = .tenant(id: String(parts[2]), version: version)
        case "project" where parts.count == 2: self = .projectConfig(version: version)
        default: return nil
        }
    }
}

/// Something that caches what ``InvalidationEvent``s describe.
public protocol InvalidationSubscriber: Sendable {
    /// Drops what the event makes stale.
    func invalidate(_ event: InvalidationEvent)
    /// Drops everything (the listener reconnected and may have missed events).
    func invalidateAll()
    /// Whether what it holds stays in use while the database is unreachable (it is dropped
    /// when the listener reconnects all the same). True for what forward auth verifies with
    /// — tenant settings, signing keys, verified tokens — which an outage cannot change:
    /// nothing is written while no instance reaches the database, and whatever was written
    /// meanwhile is flushed on reconnection before a request is admitted again.
    var keptThroughOutage: Bool { get }
}

extension InvalidationSubscriber {
    /// Caches are dropped when the connection is lost unless they say otherwise.
    public var keptThroughOutage: Bool { false }
}

/// This instance's caches, one audience for invalidation events: the ``InvalidationListener``
/// delivers every instance's NOTIFYs to them, and ``Database`` delivers this instance's own
/// transactions' events the moment each commits.
public final class InvalidationSubscribers: Sendable {
    private let subscribers = Mutex<[any InvalidationSubscriber]>([])

    init() {}

    /// Adds caches to the audience (the composition root, once, as it builds them).
    public func add(_ added: [any InvalidationSubscriber]) {
        subscribers.withLock { $0 += added }
    }

    private var all: [any InvalidationSubscriber] { subscribers.withLock { $0 } }

    /// Delivers `events` to every subscriber.
    func deliver(_ events: [InvalidationEvent]) {
        guard !events.isEmpty else { return }
        for subscriber in all {
            for event in events { subscriber.invalidate(event) }
        }
    }

    /// Flushes every subscriber, or (`lostConnection`) those not kept through an outage.
    func invalidateAll(lostConnection: Bool = false) {
        for subscriber in all where !(lostConnection && subscriber.keptThroughOutage) { subscriber.invalidateAll() }
    }
}
