import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON
import PortcullisStore

/// `/v2/projects/{project}/config` (also under `/admin/v2/…`): the project users' switches.
struct ProjectConfigRoutes {
    let service: TenantAdminService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("config") { _, context in
            _ = try context.requireAdmin(for: .project)
            return try resource(try await service.projectConfig().settings)
        }
        group.patch("config") { request, context in
            let admin = try context.requireAdmin(for: .project)
            let change = try TenantResource.change(
                body: await request.decode(as: JSONValue.self, context: context), updateMask: request.query("updateMask"),
                kind: .project)
            let config = try await service.updateProjectConfig(change: change, actor: admin.actor)
            return try resource(config.settings)
        }
    }

    func resource(_ settings: TenantSettings) throws -> NamedResource {
        NamedResource(name: "projects/\(projectId)/config", fields: try TenantResource.fields(settings))
    }
}
