import Hummingbird
import PortcullisCore
import PortcullisStore

/// `GET /v2/projects/{project}[/tenants/{tenant}]/auditEvents`: the audit log, newest first.
///
/// A tenant's log outlives the tenant (a deleted tenant's id is never reused, so its log is
/// its own); an id that never named a tenant is 404 `TENANT_NOT_FOUND`, as on every admin path.
struct AuditRoutes {
    let audit: AuditLogRepository
    let tenants: TenantRepository

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("auditEvents") { request, context in
            _ = try context.requireAdmin(for: .project)
            return try await page(request: request, tenantId: request.query("tenantId"))
        }
        group.get("tenants/{tenant}/auditEvents") { request, context in
            let id = try context.parameters.require("tenant")
            _ = try context.requireAdmin(for: .tenant(id))
            guard try await tenants.hasExisted(id: id) else { throw AuthError(.tenantNotFound) }
            return try await page(request: request, tenantId: id)
        }
    }

    func page(request: Request, tenantId: String?) async throws -> AuditEventList {
        let pageSize = Int(request.query("pageSize") ?? "") ?? 100
        guard (1...1000).contains(pageSize) else {
            throw AuthError(.invalidArgument, detail: "pageSize must be between 1 and 1000")
        }
        var before: Int64?
        if let token = request.query("pageToken"), !token.isEmpty {
            guard let id = Int64(token) else { throw AuthError(.invalidArgument, detail: "Invalid page token") }
            before = id
        }
        let events = try await audit.list(tenantId: tenantId, beforeId: before, limit: pageSize)
        let next = events.count == pageSize ? events.last.map { String($0.id) } : nil
        return AuditEventList(auditEvents: events.map(AuditEventResource.init), nextPageToken: next)
    }
}
