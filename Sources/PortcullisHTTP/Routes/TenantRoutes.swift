import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `/v2/projects/{project}/tenants[/{tenant}]`: Identity Platform's tenant CRUD.
struct TenantRoutes {
    let service: TenantAdminService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("tenants") { request, context in
            let admin = try context.requireAdmin(for: .project)
            let tenant = try await service.create(body: request.decode(as: JSONValue.self, context: context), actor: admin.actor)
            return resource(tenant)
        }
        group.get("tenants") { request, context in
            _ = try context.requireAdmin(for: .project)
            let page = try await service.list(pageSize: request.integerQuery("pageSize"), pageToken: request.query("pageToken"))
            return TenantList(tenants: page.tenants.map(resource), nextPageToken: page.nextPageToken)
        }
        group.get("tenants/{tenant}") { _, context in
            let id = try context.parameters.require("tenant")
            _ = try context.requireAdmin(for: .tenant(id))
            return resource(try await service.get(id: id))
        }
        group.patch("tenants/{tenant}") { request, context in
            let id = try context.parameters.require("tenant")
            let admin = try context.requireAdmin(for: .tenant(id))
            let tenant = try await service.update(
                id: id, body: request.decode(as: JSONValue.self, context: context), updateMask: request.query("updateMask"),
                scope: admin.scope, actor: admin.actor)
            return resource(tenant)
        }
        group.delete("tenants/{tenant}") { _, context in
            let id = try context.parameters.require("tenant")
            let admin = try context.requireAdmin(for: .project)
            try await service.delete(id: id, actor: admin.actor)
            return EmptyResponse()
        }
    }

    /// Identity Platform's tenant resource: `name` plus the settings.
    func resource(_ tenant: Tenant) -> NamedResource {
        NamedResource(name: "projects/\(projectId)/tenants/\(tenant.id)", fields: tenant.settings.json)
    }
}
