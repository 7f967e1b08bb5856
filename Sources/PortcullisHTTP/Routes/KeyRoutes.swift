import Foundation
import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto
import PortcullisStore

/// Public keys and discovery per issuer, and key administration.
///
/// - `GET /v1/projects/{p}[/tenants/{t}]/jwks` (public)
/// - `GET /{p}[/tenants/{t}]/.well-known/openid-configuration` (public, under each issuer)
/// - `POST /v2/projects/{p}[/tenants/{t}]/keys:rotate`, `GET …/keys` (admin; no private parts)
struct KeyRoutes {
    let keyrings: KeyringService
    let tokens: TokenService
    let tenants: TenantSettingsCache
    let projectId: String
    let publicURL: String

    func registerPublic(on router: Router<PortcullisRequestContext>) {
        router.get("v1/projects/{project}/jwks") { _, context in
            try await jwks(project: context.parameters.require("project"), tenant: .project)
        }
        router.get("v1/projects/{project}/tenants/{tenant}/jwks") { _, context in
            try await jwks(project: context.parameters.require("project"), tenant: TenantScope(context.parameters.require("tenant")))
        }
        router.get("{project}/.well-known/openid-configuration") { _, context in
            try await discovery(project: context.parameters.require("project"), tenant: .project)
        }
        router.get("{project}/tenants/{tenant}/.well-known/openid-configuration") { _, context in
            try await discovery(project: context.parameters.require("project"), tenant: TenantScope(context.parameters.require("tenant")))
        }
    }

    func registerAdmin(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("keys:rotate") { _, context in
            let admin = try context.requireAdmin(for: .project)
            return try await rotated(tenant: .project, actor: admin.actor)
        }
        group.post("tenants/{tenant}/keys:rotate") { _, context in
            let id = try context.parameters.require("tenant")
            let admin = try context.requireAdmin(for: .tenant(id))
            return try await rotated(tenant: TenantScope(id), actor: admin.actor)
        }
        group.get("keys") { _, context in
            _ = try context.requireAdmin(for: .project)
            return try await list(tenant: .project)
        }
        group.get("tenants/{tenant}/keys") { _, context in
            let id = try context.parameters.require("tenant")
            _ = try context.requireAdmin(for: .tenant(id))
            return try await list(tenant: TenantScope(id))
        }
    }

    private func checkedTenant(project: String, tenant: TenantScope) async throws {
        guard project == projectId else { throw AuthError(.projectNotFound) }
        do {
            _ = try await tenants.settings(tenant: tenant)
        } catch let error as AuthError {
            throw error.onResourcePath()
        }
    }

    private func jwks(project: String, tenant: TenantScope) async throws -> Response {
        try await checkedTenant(project: project, tenant: tenant)
        var response = try CompactJSONResponseEncoder.response(JWKSDocument(document: try await keyrings.keyring(tenant: tenant).jwks))
        response.headers[.cacheControl] = "public, max-age=\(keyrings.jwksMaxAgeSeconds)"
        return response
    }

    private func discovery(project: String, tenant: TenantScope) async throws -> OpenIDConfiguration {
        try await checkedTenant(project: project, tenant: tenant)
        let keyring = try await keyrings.keyring(tenant: tenant)
        var algorithms = [keyring.activeAlgorithm.rawValue]
        if let next = keyring.next, next.algorithm != keyring.activeAlgorithm { algorithms.append(next.algorithm.rawValue) }
        let jwksPath = tenant.tenantId.map { "/v1/projects/\(projectId)/tenants/\($0)/jwks" } ?? "/v1/projects/\(projectId)/jwks"
        return OpenIDConfiguration(
            issuer: tokens.issuer(tenant: tenant), jwksURI: publicURL + jwksPath, idTokenSigningAlgValuesSupported: algorithms)
    }

    private func rotated(tenant: TenantScope, actor: String) async throws -> RotatedKeyResponse {
        _ = try await tenants.settings(tenant: tenant)
        let keyring = try await keyrings.rotate(tenant: tenant, actor: actor)
        return RotatedKeyResponse(kid: keyring.activeKid, alg: keyring.activeAlgorithm.rawValue)
    }

    private func list(tenant: TenantScope) async throws -> SigningKeyList {
        _ = try await tenants.settings(tenant: tenant)
        let keys = try await keyrings.list(tenant: tenant)
        let now = keyrings.clock.now().date
        return SigningKeyList(
            keys: keys.map { key in
                SigningKeyInfo(
                    kid: key.kid, alg: key.algorithm, state: key.state(at: now).rawValue,
                    createTime: RFC3339.format(key.createTime),
                    activateTime: key.signsFrom > now ? RFC3339.format(key.signsFrom) : nil)
            })
    }
}
