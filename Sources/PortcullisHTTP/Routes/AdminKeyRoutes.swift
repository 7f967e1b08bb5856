import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `/v2/projects/{project}/adminKeys[/{key}]`: project-scoped admin keys.
struct AdminKeyRoutes {
    let service: AdminKeyService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("adminKeys") { request, context in
            let admin = try context.requireAdmin(for: .project)
            let body = try await request.decode(as: CreateAdminKeyRequest.self, context: context)
            let (key, secret) = try await service.create(
                displayName: body.displayName ?? "", scope: body.tenantId.map(AdminScope.tenant) ?? .project,
                actor: admin.actor)
            return AdminKeyResource(key, projectId: projectId, secret: secret)
        }
        group.get("adminKeys") { request, context in
            _ = try context.requireAdmin(for: .project)
            let keys = try await service.list(ofTenant: request.query("tenantId"))
            return AdminKeyList(adminKeys: keys.map { AdminKeyResource($0, projectId: projectId) })
        }
        group.delete("adminKeys/{key}") { _, context in
            let admin = try context.requireAdmin(for: .project)
            try await service.revoke(keyId: context.parameters.require("key"), actor: admin.actor)
            return EmptyResponse()
        }
    }
}
