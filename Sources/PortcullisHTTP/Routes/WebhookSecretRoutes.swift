import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `GET /v2/projects/{p}[/tenants/{t}]/webhookSecret`: the secret email-delivery webhooks
/// are signed with, for the receiver's configuration. A tenant key reads its tenant's only.
struct WebhookSecretRoutes {
    let delivery: EmailDeliveryService

    /// The answer: the secret and the `emailDelivery.webhookSecretVersion` it belongs to.
    struct Answer: ResponseEncodable {
        let secret: String
        let version: Int
    }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        for prefix in ["", "tenants/{tenant}/"] {
            group.get("\(prefix)webhookSecret") { _, context in
                let tenantId = context.parameters.get("tenant")
                let admin = try context.requireAdmin(for: tenantId.map(AdminTarget.tenant) ?? .project)
                let (secret, version) = try await delivery.webhookSecret(tenant: TenantScope(tenantId), actor: admin.actor)
                return Answer(secret: secret, version: version)
            }
        }
    }
}
