import Hummingbird
import PortcullisAuth
import PortcullisCore

/// Email actions: `accounts:sendOobCode` and `accounts:resetPassword` for end users, and
/// `accounts:sendOobCode` for admins (`returnOobLink`). Applying a verification is
/// `accounts:update` with `oobCode` (``AccountRoutes``); the page behind the links is
/// ``ActionPageRoutes``.
struct EmailActionRoutes {
    let emailActions: EmailActionService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("accounts:sendOobCode") { request, context in
            let body = try await request.decode(as: SendOobCodeRequest.self, context: context)
            // `returnOobLink` is honoured only for admins: an end user's request sends, whatever it says.
            let email = try await emailActions.send(
                body.sendRequest(locale: request.firebaseLocale, apiKey: request.apiKey), tenantId: body.tenant,
                client: context.clientAddress)
            return SendOobCodeResponse(email: email)
        }
        group.post("accounts:resetPassword") { request, context in
            let body = try await request.decode(as: ResetPasswordRequest.self, context: context)
            guard let newPassword = body.newPassword else {
                let (code, currentEmail) = try await emailActions.inspect(code: body.oobCode, tenant: TenantScope(body.tenant))
                return ResetPasswordResponse(
                    email: currentEmail ?? code.email, requestType: code.kind.rawValue,
                    newEmail: code.kind == .verifyAndChangeEmail ? code.email : nil)
            }
            let (code, user) = try await emailActions.resetPassword(
                code: body.oobCode, newPassword: newPassword, tenant: TenantScope(body.tenant))
            return ResetPasswordResponse(email: user.email ?? code.email, requestType: code.kind.rawValue)
        }
    }

    /// `POST /v1/projects/{p}[/tenants/{t}]/accounts:sendOobCode`: the tenant from the path.
    func registerAdmin(on group: RouterGroup<PortcullisRequestContext>) {
        for prefix in ["", "tenants/{tenant}/"] {
            group.post("\(prefix)accounts:sendOobCode") { request, context in
                let tenantId = context.parameters.get("tenant")
                let admin = try context.requireAdmin(for: tenantId.map(AdminTarget.tenant) ?? .project)
                let body = try await request.decode(as: SendOobCodeRequest.self, context: context)
                let (email, link) = try await emailActions.adminSend(
                    body.sendRequest(locale: request.firebaseLocale, apiKey: nil), tenant: TenantScope(tenantId),
                    returnLink: body.returnOobLink ?? false, actor: admin.actor)
                return SendOobCodeResponse(email: email, oobLink: link)
            }
        }
    }
}
