import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore

/// The tenant resource's bodies and update masks, read as the HTTP routes and the CLI read
/// them (`TenantResource`), so these tests state changes the way operators send them.
extension TenantAdminService {
    func create(body: JSONValue, actor: String) async throws -> Tenant {
        try await create(settings: TenantResource.settings(from: body, kind: .tenant), actor: actor)
    }

    func update(id: String, body: JSONValue, updateMask: String?, scope: AdminScope, actor: String) async throws -> Tenant {
        let change = try TenantResource.change(body: body, updateMask: updateMask, kind: .tenant)
        return try await update(id: id, change: change, scope: scope, actor: actor)
    }

    func updateProjectConfig(body: JSONValue, updateMask: String?, actor: String) async throws -> ProjectConfig {
        try await updateProjectConfig(change: TenantResource.change(body: body, updateMask: updateMask, kind: .project), actor: actor)
    }
}
