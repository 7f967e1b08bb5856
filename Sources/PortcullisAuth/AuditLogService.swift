public import PortcullisCore
public import PortcullisStore

/// Reading the audit log (admin): pages of events, newest first.
///
/// A tenant's log outlives the tenant (a deleted tenant's id is never reused, so its log is
/// its own); an id that never named a tenant is `TENANT_NOT_FOUND`, as on every admin path.
public struct AuditLogService: Sendable {
    let audit: AuditLogRepository
    let tenants: TenantRepository

    /// A service over the audit log and the tenants' records.
    public init(audit: AuditLogRepository, tenants: TenantRepository) {
        self.audit = audit
        self.tenants = tenants
    }

    /// One page of the project's log (`tenantId` narrows it to one tenant's events) and the
    /// next page's token: `pageSize` 1–1000 events (default 100), after `pageToken`'s.
    public func page(
        ofTenant tenantId: String?, pageSize: Int?, pageToken: String?
    ) async throws -> (
        events: [AuditEvent], nextPageToken: String?
    ) {
        let size = pageSize ?? 100
        guard (1...1000).contains(size) else {
            throw AuthError(.invalidArgument, detail: "pageSize must be between 1 and 1000")
        }
        var before: Int64?
        if let pageToken, !pageToken.isEmpty {
            guard let id = Int64(pageToken) else { throw AuthError(.invalidArgument, detail: "Invalid page token") }
            before = id
        }
        let events = try await audit.list(ofTenant: tenantId, beforeId: before, limit: size)
        return (events, events.count == size ? events.last.map { String($0.id) } : nil)
    }

    /// One page of a tenant's own log; `TENANT_NOT_FOUND` for an id that never named a tenant.
    public func tenantPage(
        tenantId: String, pageSize: Int?, pageToken: String?
    ) async throws -> (
        events: [AuditEvent], nextPageToken: String?
    ) {
        guard TenantID.isValid(tenantId), try await tenants.hasExisted(id: tenantId) else { throw AuthError(.tenantNotFound) }
        return try await page(ofTenant: tenantId, pageSize: pageSize, pageToken: pageToken)
    }
}
