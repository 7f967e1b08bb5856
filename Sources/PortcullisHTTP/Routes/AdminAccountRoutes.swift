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
                let body = try await EndUserRequest(request, context: context)
                let user = try await accounts.create(
                    tenantId: tenantId, uid: body.string("localId"), email: body.string("email"),
                    password: body.string("password"), emailVerified: body.bool("emailVerified") ?? false,
                    profile: .init(displayName: body.string("displayName"), photoURL: body.string("photoUrl")),
                    disabled: body.bool("disabled") ?? body.bool("disableUser") ?? false)
                guard case .object(var members) = UserResource.json(user) else { throw AuthError(.internalError) }
                members["kind"] = .string("identitytoolkit#SignupNewUserResponse")
                return JSONResponse.make(.object(members))
            }
            group.post("\(prefix)accounts:lookup") { request, context in
                let tenantId = try Self.tenant(context)
                let body = try await EndUserRequest(request, context: context)
                var users: [JSONValue] = []
                for uid in try Self.localIds(body) {
                    // Absent users are left out, as Identity Toolkit does; a failure is an error, never "absent".
                    if let user = try await accounts.lookup(tenantId: tenantId, uid: uid) { users.append(UserResource.json(user)) }
                }
                var members: [String: JSONValue] = ["kind": .string("identitytoolkit#GetAccountInfoResponse")]
                if !users.isEmpty { members["users"] = .array(users) }
                return JSONResponse.make(.object(members))
            }
            group.post("\(prefix)accounts:update") { request, context in
                let tenantId = try Self.tenant(context)
                let body = try await EndUserRequest(request, context: context)
                guard let uid = try body.string("localId"), !uid.isEmpty else { throw AuthError(.missingLocalId) }
                let validSince = try body.body.int("validSince").map(Int64.init)
                let claims = try body.string("customAttributes").map(CustomClaims.parse)
                let user = try await accounts.update(
                    tenantId: tenantId, uid: uid, disabled: body.bool("disableUser"), validSince: validSince,
                    emailVerified: body.bool("emailVerified"), customAttributes: claims,
                    displayName: body.string("displayName"))
                return JSONResponse.make(
                    .object(["kind": .string("identitytoolkit#SetAccountInfoResponse"), "localId": .string(user.uid)]))
            }
            group.post("\(prefix)accounts:delete") { request, context in
                let tenantId = try Self.tenant(context)
                let body = try await EndUserRequest(request, context: context)
                guard let uid = try body.string("localId"), !uid.isEmpty else { throw AuthError(.missingLocalId) }
                try await accounts.delete(tenantId: tenantId, uid: uid)
                return JSONResponse.make(.object(["kind": .string("identitytoolkit#DeleteAccountResponse")]))
            }
        }
    }

    /// The path's tenant (never the body's), authorised for the caller's key.
    static func tenant(_ context: PortcullisRequestContext) throws -> String? {
        let tenantId = context.parameters.get("tenant")
        _ = try context.requireAdmin(for: tenantId.map(AdminTarget.tenant) ?? .project)
        return tenantId
    }

    static func localIds(_ body: EndUserRequest) throws -> [String] {
        if let list = try body.body.array("localId") {
            return list.compactMap { if case .string(let id) = $0 { id } else { nil } }
        }
        return try body.string("localId").map { [$0] } ?? []
    }
}
