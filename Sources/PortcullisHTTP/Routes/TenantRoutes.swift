import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON

/// `/v2/projects/{project}/tenants[/{tenant}]`: Identity Platform's tenant CRUD.
struct TenantRoutes {
    let service: TenantAdminService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("tenants") { request, context in
            let admin = try context.requireAdmin(for: .project)
            let settings = try TenantResource.settings(
                from: await request.decode(as: JSONValue.self, context: context), kind: .tenant)
            let tenant = try await service.create(settings: settings, actor: admin.actor)
            return try resource(tenant)
        }
        group.get("tenants") { request, context in
            _ = try context.requireAdmin(for: .project)
            let page = try await service.list(pageSize: request.integerQuery("pageSize"), pageToken: request.query("pageToken"))
            return TenantList(tenants: try page.tenants.map(resource), nextPageToken: page.nextPageToken)
        }
        group.get("tenants/{tenant}") { _, context in
            let id = try context.parameters.require("tenant")
            _ = try context.requireAdmin(for: .tenant(id))
            return try resource(try await service.get(id: id))
        }
        group.patch("tenants/{tenant}") { request, context in
            let id = try context.parameters.require("tenant")
            let admin = try context.requireAdmin(for: .tenant(id))
            let change = try TenantResource.change(
                body: await request.decode(as: JSONValue.self, context: context), updateMask: request.query("updateMask"),
                kind: .tenant)
            let tenant = try await service.update(id: id, change: change, scope: admin.scope, actor: admin.actor)
            return try resource(tenant)
        }
        group.delete("tenants/{tenant}") { _, context in
            let id = try context.parameters.require("tenant")
            let admin = try context.requireAdmin(for: .project)
            try await service.delete(id: id, actor: admin.actor)
            return EmptyResponse()
        }
    }

    /// Identity Platform's tenant resource: `name` plus the settings.
    func resource(_ tenant: Tenant) throws -> NamedResource {
        NamedResource(name: "projects/\(projectId)/tenants/\(tenant.id)", fields: try TenantResource.fields(tenant.settings))
    }
}
