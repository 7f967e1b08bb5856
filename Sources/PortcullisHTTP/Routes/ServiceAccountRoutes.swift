import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `/v2/projects/{p}[/tenants/{t}]/serviceAccounts[/{keyId}]`: the signers of custom tokens.
///
/// A tenant key manages its own tenant's accounts only; the project's accounts, which
/// may sign for any tenant, need a project key.
struct ServiceAccountRoutes {
    let service: ServiceAccountService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("serviceAccounts") { request, context in
            let admin = try context.requireAdmin(for: .project)
            return try await create(request, context: context, tenant: .project, actor: admin.actor)
        }
        group.post("tenants/{tenant}/serviceAccounts") { request, context in
            let id = try context.parameters.require("tenant")
            let admin = try context.requireAdmin(for: .tenant(id))
            return try await create(request, context: context, tenant: TenantScope(id), actor: admin.actor)
        }
        group.get("serviceAccounts") { _, context in
            _ = try context.requireAdmin(for: .project)
            return try await list(tenant: .project)
        }
        group.get("tenants/{tenant}/serviceAccounts") { _, context in
            let id = try context.parameters.require("tenant")
            _ = try context.requireAdmin(for: .tenant(id))
            return try await list(tenant: TenantScope(id))
        }
        group.delete("serviceAccounts/{keyId}") { _, context in
            let admin = try context.requireAdmin(for: .project)
            try await service.delete(tenant: .project, keyId: context.parameters.require("keyId"), actor: admin.actor)
            return EmptyResponse()
        }
        group.delete("tenants/{tenant}/serviceAccounts/{keyId}") { _, context in
            let id = try context.parameters.require("tenant")
            let admin = try context.requireAdmin(for: .tenant(id))
            try await service.delete(tenant: TenantScope(id), keyId: context.parameters.require("keyId"), actor: admin.actor)
            return EmptyResponse()
        }
    }

    private func create(
        _ request: Request, context: PortcullisRequestContext, tenant: TenantScope, actor: String
    ) async throws -> ServiceAccountResource {
        let body = try await request.decode(as: CreateServiceAccountRequest.self, context: context)
        let created = try await service.create(
            tenant: tenant, displayName: body.displayName, publicKey: try body.publicKeyInput(),
            clientEmail: body.clientEmail, actor: actor)
        return ServiceAccountResource(created.account, projectId: projectId, privateKeyPEM: created.privateKeyPEM)
    }

    private func list(tenant: TenantScope) async throws -> ServiceAccountList {
        let accounts = try await service.list(tenant: tenant)
        return ServiceAccountList(serviceAccounts: accounts.map { ServiceAccountResource($0, projectId: projectId) })
    }
}
