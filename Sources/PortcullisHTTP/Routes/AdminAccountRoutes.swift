import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `/v1/projects/{p}[/tenants/{t}]/accounts…`: admin user management in the shapes the
/// Admin SDKs send. The self-service switches do not apply here; every change is audited
/// under the caller's key.
struct AdminAccountRoutes {
    let accounts: AdminAccountService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        for prefix in ["", "tenants/{tenant}/"] {
            group.post("\(prefix)accounts") { request, context in
                let (tenant, admin) = try Self.caller(context)
                let body = try await request.decode(as: AdminCreateAccountRequest.self, context: context)
                try body.requireNoSecondFactors()
                let user = try await accounts.create(
                    tenant: tenant, uid: body.localId, email: body.email, password: body.password,
                    emailVerified: body.emailVerified ?? false, profile: body.profile,
                    disabled: body.disabled ?? body.disableUser ?? false, phoneNumber: body.phoneNumber, actor: admin.actor)
                return UserAnswer(kind: "identitytoolkit#SignupNewUserResponse", user: UserInfo(user), tokens: nil)
            }
            group.post("\(prefix)accounts:lookup") { request, context in
                let (tenant, _) = try Self.caller(context)
                let body = try await request.decode(as: AdminLookupRequest.self, context: context)
                let users = try await accounts.lookup(
                    tenant: tenant, uids: body.localId?.values ?? [], emails: body.email?.values ?? [],
                    phoneNumbers: body.phoneNumber?.values ?? [], federatedIds: body.federatedIds)
                // Absent users are left out, and `users` with them when none matched, as Identity Toolkit does.
                return LookupResponse(users: users.isEmpty ? nil : users.map(UserInfo.init))
            }
            group.post("\(prefix)accounts:update") { request, context in
                let (tenant, admin) = try Self.caller(context)
                let body = try await request.decode(as: AdminUpdateAccountRequest.self, context: context)
                let user = try await accounts.update(tenant: tenant, uid: body.uid, body.changes, actor: admin.actor)
                return UserAnswer(kind: "identitytoolkit#SetAccountInfoResponse", user: UserInfo(user), tokens: nil)
            }
            group.post("\(prefix)accounts:delete") { request, context in
                let (tenant, admin) = try Self.caller(context)
                let body = try await request.decode(as: AdminDeleteAccountRequest.self, context: context)
                try await accounts.delete(tenant: tenant, uid: body.uid, actor: admin.actor)
                return KindResponse(kind: "identitytoolkit#DeleteAccountResponse")
            }
            group.post("\(prefix)accounts:batchDelete") { request, context in
                let (tenant, admin) = try Self.caller(context)
                let body = try await request.decode(as: AdminBatchDeleteRequest.self, context: context)
                let errors = try await accounts.batchDelete(
                    tenant: tenant, uids: body.localIds ?? [], force: body.force ?? false, actor: admin.actor)
                return AdminBatchDeleteResponse(
                    errors: errors.isEmpty
                        ? nil : errors.map { .init(index: $0.index, localId: $0.localId, message: $0.message) })
            }
            group.get("\(prefix)accounts:batchGet") { request, context in
                let (tenant, _) = try Self.caller(context)
                let maxResults = try request.query("maxResults").map { text throws(AuthError) in
                    guard let number = Int(text) else { throw AuthError(.invalidArgument, detail: "maxResults must be a number") }
                    return number
                }
                let page = try await accounts.page(
                    tenant: tenant, maxResults: maxResults, pageToken: request.query("nextPageToken"))
                return AdminDownloadResponse(users: page.users.map(UserInfo.init), nextPageToken: page.nextPageToken)
            }
            group.post("\(prefix)accounts:query") { request, context in
                let (tenant, _) = try Self.caller(context)
                let body = try await request.decode(as: AdminQueryRequest.self, context: context)
                let result = try await accounts.query(
                    tenant: tenant, try body.query, returnUserInfo: body.returnUserInfo ?? true)
                return AdminQueryResponse(
                    recordsCount: String(result.recordsCount), userInfo: result.users.map { $0.map(UserInfo.init) })
            }
        }
    }

    /// The path's tenant (never the body's) and the caller, authorised for that tenant.
    static func caller(_ context: PortcullisRequestContext) throws -> (tenant: TenantScope, admin: AdminPrincipal) {
        let tenant = TenantScope(context.parameters.get("tenant"))
        let admin = try context.requireAdmin(for: tenant.tenantId.map(AdminTarget.tenant) ?? .project)
        return (tenant, admin)
    }
}
