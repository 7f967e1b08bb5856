import Hummingbird
import PortcullisCore
import PortcullisStore

/// `GET /v1/projects` (API key required; v3's `getProjectConfig`): the project and the
/// domains its apps may run on.
///
/// Project-wide, as in Identity Toolkit, whose request names no tenant: the answer is the
/// project config's, never a tenant's.
struct PublicProjectConfigRoutes {
    let tenants: TenantSettingsCache
    let projectId: String
    let publicURL: String

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("projects") { _, _ in
            let settings = try await tenants.settings(tenant: .project)
            return PublicProjectConfigResponse(
                projectId: projectId,
                authorizedDomains: ContinueURLPolicy.allowedDomains(
                    authorizedDomains: settings.authorizedDomains, publicURL: publicURL))
        }
    }
}
