import PostgresNIO

/// A change another instance must hear about, sent with `pg_notify` in the
/// transaction that makes it (so it is delivered only if that commits).
public enum InvalidationEvent: Sendable, Equatable {
    /// A tenant was created, changed or deleted; `version` is its new version (0 when deleted).
    case tenant(id: String, version: Int64)
    /// The project config changed.
    case projectConfig(version: Int64)

    /// The one channel every instance listens on.
    public static let channel = "portcullis_invalidation"

    /// The NOTIFY payload: `tenant:<version>:<id>` or `project:<version>`.
    public var payload: String {
        switch self {
        case .tenant(let id, let version): "tenant:\(version):\(id)"
        case .projectConfig(let version): "project:\(version)"
        }
    }

    /// Parses a payload; `nil` for anything unknown (ignored, never fatal).
    public init?(payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let version = Int64(parts[1]) else { return nil }
        switch parts[0] {
        case "tenant" where parts.count == 3: self = .tenant(id: String(parts[2]), version: version)
        case "project" where parts.count == 2: self = .projectConfig(version: version)
        default: return nil
        }
    }

    /// Queues the notification on `connection`'s current transaction.
    func send(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
    }
}

/// Something that caches what ``InvalidationEvent``s describe.
public protocol InvalidationSubscriber: Sendable {
    /// Drops what the event makes stale.
    func invalidate(_ event: InvalidationEvent)
    /// Drops everything (the listener reconnected and may have missed events).
    func invalidateAll()
}
