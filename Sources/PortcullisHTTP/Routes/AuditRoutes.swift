import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `GET /v2/projects/{project}[/tenants/{tenant}]/auditEvents`: the audit log, newest first.
struct AuditRoutes {
    let service: AuditLogService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("auditEvents") { request, context in
            _ = try context.requireAdmin(for: .project)
            let page = try await service.page(
                ofTenant: request.query("tenantId"), pageSize: request.integerQuery("pageSize"),
                pageToken: request.query("pageToken"))
            return AuditEventList(auditEvents: page.events.map(AuditEventResource.init), nextPageToken: page.nextPageToken)
        }
        group.get("tenants/{tenant}/auditEvents") { request, context in
            let id = try context.parameters.require("tenant")
            _ = try context.requireAdmin(for: .tenant(id))
            let page = try await service.tenantPage(
                tenantId: id, pageSize: request.integerQuery("pageSize"), pageToken: request.query("pageToken"))
            return AuditEventList(auditEvents: page.events.map(AuditEventResource.init), nextPageToken: page.nextPageToken)
        }
    }

}
