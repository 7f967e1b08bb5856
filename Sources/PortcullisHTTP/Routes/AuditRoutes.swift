import Hummingbird
import PortcullisCore
import PortcullisStore

/// `GET /v2/projects/{project}[/tenants/{tenant}]/auditEvents`: the audit log, newest first.
struct AuditRoutes {
    let audit: AuditLogRepository

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("auditEvents") { request, context in
            _ = try context.requireAdmin(for: .project)
            return try await page(request: request, tenantId: request.query("tenantId"))
        }
        group.get("tenants/{tenant}/auditEvents") { request, context in
            let id = try context.parameters.require("tenant")
            _ = try context.requireAdmin(for: .tenant(id))
            return try await page(request: request, tenantId: id)
        }
    }

    func page(request: Request, tenantId: String?) async throws -> Response {
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
        var body: [String: JSONValue] = ["auditEvents": .array(events.map(resource))]
        if events.count == pageSize, let last = events.last { body["nextPageToken"] = .string(String(last.id)) }
        return JSONResponse.make(.object(body))
    }

    func resource(_ event: AuditEvent) -> JSONValue {
        var json: [String: JSONValue] = [
            "id": .string(String(event.id)),
            "actor": .string(event.actor),
            "action": .string(event.action),
            "target": .string(event.target),
            "time": .string(RFC3339.format(event.time)),
        ]
        if let tenantId = event.tenantId { json["tenantId"] = .string(tenantId) }
        if let before = event.before { json["before"] = before }
        if let after = event.after { json["after"] = after }
        return .object(json)
    }
}
