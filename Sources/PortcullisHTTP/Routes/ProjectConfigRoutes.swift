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
            return JSONResponse.make(resource(try await service.projectConfig().settings))
        }
        group.patch("config") { request, context in
            let admin = try context.requireAdmin(for: .project)
            let config = try await service.updateProjectConfig(
                body: request.jsonBody(context: context), updateMask: request.query("updateMask"),
                actor: admin.actor)
            return JSONResponse.make(resource(config.settings))
        }
    }

    func resource(_ settings: TenantSettings) -> JSONValue {
        var json = settings.json
        json.setValue(.string("projects/\(projectId)/config"), at: ["name"])
        return json
    }
}
