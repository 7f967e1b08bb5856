import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisStore

/// `/v2/projects/{project}/config` (also under `/admin/v2/…`): the project users' switches.
struct ProjectConfigRoutes {
    let service: TenantAdminService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("config") { _, context in
            _ = try context.requireAdmin(for: .project)
            return resource(try await service.projectConfig().settings)
        }
        group.patch("config") { request, context in
            let admin = try context.requireAdmin(for: .project)
            let config = try await service.updateProjectConfig(
                body: request.decode(as: JSONValue.self, context: context), updateMask: request.query("updateMask"),
                actor: admin.actor)
            return resource(config.settings)
        }
    }

    func resource(_ settings: TenantSettings) -> NamedResource {
        NamedResource(name: "projects/\(projectId)/config", fields: settings.json)
    }
}
