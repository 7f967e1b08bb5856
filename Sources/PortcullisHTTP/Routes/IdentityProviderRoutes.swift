import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON

/// Federated provider configuration, project-wide and per tenant (admin):
///
/// - `…/defaultSupportedIdpConfigs` (`?idpId=google.com` on create) for the built-in providers,
/// - `…/oauthIdpConfigs` (`?oauthIdpConfigId=oidc.<name>` on create) for generic OIDC ones,
///
/// each with `POST`, `GET` (list), and `GET`/`PATCH` (`updateMask`)/`DELETE` on `/{id}`,
/// under `/v2/projects/{p}` and `/v2/projects/{p}/tenants/{t}`.
struct IdentityProviderRoutes {
    let service: IdentityProviderAdminService
    let projectId: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        for scoped in [false, true] {
            register(.builtIn, collection: "defaultSupportedIdpConfigs", idParameter: "idpId", tenantScoped: scoped, on: group)
            register(.oidc, collection: "oauthIdpConfigs", idParameter: "oauthIdpConfigId", tenantScoped: scoped, on: group)
        }
    }

    /// One collection (built-in or OIDC) in one scope (project users or a tenant).
    private struct Collection: Sendable {
        let kind: IdentityProviderAdminService.Kind
        let name: String
        let idParameter: String
        let tenantScoped: Bool
        let projectId: String

        var path: String { tenantScoped ? "tenants/{tenant}/\(name)" : name }

        /// The tenant of the path (`nil`: project users), once the admin key is known to cover it.
        func scope(_ context: PortcullisRequestContext) throws -> (tenant: TenantScope, actor: String) {
            guard tenantScoped else { return (.project, try context.requireAdmin(for: .project).actor) }
            let id = try context.parameters.require("tenant")
            return (.tenant(id), try context.requireAdmin(for: .tenant(id)).actor)
        }

        func resource(_ provider: IdentityProvider, tenant: TenantScope) -> NamedResource {
            let name = "projects/\(projectId)/" + (tenant.tenantId.map { "tenants/\($0)/" } ?? "") + "\(self.name)/\(provider.providerId)"
            return NamedResource(name: name, fields: IdentityProviderResource.fields(provider))
        }
    }

    private func register(
        _ kind: IdentityProviderAdminService.Kind, collection name: String, idParameter: String, tenantScoped: Bool,
        on group: RouterGroup<PortcullisRequestContext>
    ) {
        let collection = Collection(
            kind: kind, name: name, idParameter: idParameter, tenantScoped: tenantScoped, projectId: projectId)
        group.post(RouterPath(collection.path)) { request, context in
            let (tenant, actor) = try collection.scope(context)
            let body = try await request.decode(as: JSONValue.self, context: context)
            let provider = try await service.create(
                kind: kind, providerId: request.query(idParameter), tenant: tenant, actor: actor
            ) { providerId in try IdentityProviderResource.provider(providerId, from: body) }
            return collection.resource(provider, tenant: tenant)
        }
        group.get(RouterPath(collection.path)) { _, context in
            let (tenant, _) = try collection.scope(context)
            let resources = try await service.list(kind: kind, tenant: tenant).map {
                collection.resource($0, tenant: tenant)
            }
            return kind == .builtIn
                ? try CompactJSONResponseEncoder.response(DefaultSupportedIdpConfigList(defaultSupportedIdpConfigs: resources))
                : try CompactJSONResponseEncoder.response(OAuthIdpConfigList(oauthIdpConfigs: resources))
        }
        group.get(RouterPath("\(collection.path)/{provider}")) { _, context in
            let (tenant, _) = try collection.scope(context)
            let provider = try await service.get(
                kind: kind, providerId: try context.parameters.require("provider"), tenant: tenant)
            return collection.resource(provider, tenant: tenant)
        }
        group.patch(RouterPath("\(collection.path)/{provider}")) { request, context in
            let (tenant, actor) = try collection.scope(context)
            let providerId = try context.parameters.require("provider")
            let change = try IdentityProviderResource.change(
                body: await request.decode(as: JSONValue.self, context: context), updateMask: request.query("updateMask"),
                providerId: providerId)
            let provider = try await service.update(
                kind: kind, providerId: providerId, tenant: tenant, actor: actor, change: change)
            return collection.resource(provider, tenant: tenant)
        }
        group.delete(RouterPath("\(collection.path)/{provider}")) { _, context in
            let (tenant, actor) = try collection.scope(context)
            try await service.delete(
                kind: kind, providerId: try context.parameters.require("provider"), tenant: tenant, actor: actor)
            return EmptyResponse()
        }
    }
}
