/// Whose users, settings and keys something belongs to: the project's own users, or one
/// tenant's (DESIGN.md §2: a request without a tenant is the project's).
///
/// Operations take a scope rather than an optional tenant id, so "no tenant" is a named
/// case, never a forgotten `nil`; values that mirror the wire (`User.tenantId`, audit
/// entries) keep the id as Identity Toolkit spells it.
public enum TenantScope: Sendable, Hashable, CustomStringConvertible {
    /// The project's own users.
    case project
    /// One tenant's users.
    case tenant(String)

    /// The scope a tenant id names as the wire and the domain values carry it: `nil` or
    /// empty is the project.
    public init(_ tenantId: String?) {
        if let tenantId, !tenantId.isEmpty { self = .tenant(tenantId) } else { self = .project }
    }

    /// The tenant's id; `nil` for the project.
    public var tenantId: String? {
        switch self {
        case .project: nil
        case .tenant(let id): id
        }
    }

    /// The key of the scope's rows: every table is keyed by `tenant_id` first, and the
    /// project's rows by `''`.
    public var key: String { tenantId ?? "" }

    /// `project`, or `tenants/<id>`, as logs and audit targets name it.
    public var description: String { tenantId.map { "tenants/\($0)" } ?? "project" }
}

/// A value that belongs to one scope and carries its tenant id as the wire spells it.
public protocol TenantOwned {
    /// The tenant's id; `nil` for the project's.
    var tenantId: String? { get }
}

extension TenantOwned {
    /// The scope the value belongs to.
    public var scope: TenantScope { TenantScope(tenantId) }
}

extension User: TenantOwned {}
