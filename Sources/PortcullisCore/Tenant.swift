public import Foundation
public import PortcullisJSON

/// A stored tenant: its id, settings and the version counter every change bumps.
public struct Tenant: Sendable, Equatable {
    /// The tenant id (`acme-x7k2p`).
    public let id: String
    /// Its current settings.
    public var settings: TenantSettings
    /// Incremented by every change; caches compare it to skip stale invalidations.
    public let version: Int64
    /// When it was created.
    public let createTime: Date

    /// Creates a tenant value.
    public init(id: String, settings: TenantSettings, version: Int64, createTime: Date) {
        self.id = id
        self.settings = settings
        self.version = version
        self.createTime = createTime
    }
}

/// An admin key as stored: never the secret, only its hash.
public struct AdminKey: Sendable, Equatable {
    /// Public identifier, also embedded in the secret.
    public let keyId: String
    /// Operator's label.
    public let displayName: String
    /// What the key may manage.
    public let scope: AdminScope
    /// When it was created.
    public let createTime: Date
    /// When it last authenticated a request (updated at most once a minute).
    public let lastUsedTime: Date?

    /// Creates an admin key value.
    public init(keyId: String, displayName: String, scope: AdminScope, createTime: Date, lastUsedTime: Date?) {
        self.keyId = keyId
        self.displayName = displayName
        self.scope = scope
        self.createTime = createTime
        self.lastUsedTime = lastUsedTime
    }
}

/// One row of the audit log: who did what to which tenant, with before and after.
public struct AuditEvent: Sendable, Equatable {
    /// Monotonic id.
    public let id: Int64
    /// The tenant concerned; `nil` for project-level events.
    public let tenantId: String?
    /// Who acted: `adminKey:<id>`, `cli`, or `system`.
    public let actor: String
    /// What happened, e.g. `tenant.update`.
    public let action: String
    /// The resource acted on.
    public let target: String
    /// The resource before the change, if it existed.
    public let before: JSONValue?
    /// The resource after the change, if it still exists.
    public let after: JSONValue?
    /// When it happened.
    public let time: Date

    /// Creates an audit event value.
    public init(
        id: Int64, tenantId: String?, actor: String, action: String, target: String,
        before: JSONValue?, after: JSONValue?, time: Date
    ) {
        self.id = id
        self.tenantId = tenantId
        self.actor = actor
        self.action = action
        self.target = target
        self.before = before
        self.after = after
        self.time = time
    }
}
