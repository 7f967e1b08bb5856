import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `POST /v1/projects/{p}[/tenants/{t}]/accounts[:lookup|:update|:delete]`: admin user management.
/// The self-service switches do not apply here.
struct AdminAccountRoutes {
    let accounts: AdminAccountService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        for prefix in ["", "tenants/{tenant}/"] {
            group.post("\(prefix)accounts") { request, context in
                let tenantId = try Self.tenant(context)
                let body = try await request.decode(as: AdminCreateAccountRequest.self, context: context)
                let user = try await accounts.create(
                    tenantId: tenantId, uid: body.localId, email: body.email, password: body.password,
                    emailVerified: body.emailVerified ?? false, profile: body.profile,
                    disabled: body.disabled ?? body.disableUser ?? false)
                return UserAnswer(kind: "identitytoolkit#SignupNewUserResponse", user: UserInfo(user), tokens: nil)
            }
            group.post("\(prefix)accounts:lookup") { request, context in
                let tenantId = try Self.tenant(context)
                let body = try await request.decode(as: AdminLookupRequest.self, context: context)
                var users: [UserInfo] = []
                for uid in body.localIds {
                    // Absent users are left out, as Identity Toolkit does; a failure is an error, never "absent".
                    if let user = try await accounts.lookup(tenantId: tenantId, uid: uid) { users.append(UserInfo(user)) }
                }
                return LookupResponse(users: users.isEmpty ? nil : users)
            }
            group.post("\(prefix)accounts:update") { request, context in
                let tenantId = try Self.tenant(context)
                let body = try await request.decode(as: AdminUpdateAccountRequest.self, context: context)
                let user = try await accounts.update(
                    tenantId: tenantId, uid: body.uid, disabled: body.disableUser, validSince: body.validSince,
                    emailVerified: body.emailVerified, customAttributes: body.customAttributes.map(CustomClaims.parse),
                    displayName: body.displayName)
                return AdminUpdateAccountResponse(localId: user.uid)
            }
            group.post("\(prefix)accounts:delete") { request, context in
                let tenantId = try Self.tenant(context)
                let body = try await request.decode(as: AdminDeleteAccountRequest.self, context: context)
                try await accounts.delete(tenantId: tenantId, uid: body.uid)
                return KindResponse(kind: "identitytoolkit#DeleteAccountResponse")
            }
        }
    }

    /// The path's tenant (never the body's), authorised for the caller's key.
    static func tenant(_ context: PortcullisRequestContext) throws -> String? {
        let tenantId = context.parameters.get("tenant")
        _ = try context.requireAdmin(for: tenantId.map(AdminTarget.tenant) ?? .project)
        return tenantId
    }
}
