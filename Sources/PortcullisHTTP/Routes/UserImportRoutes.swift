import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON

/// `POST /v1/projects/{p}[/tenants/{t}]/accounts:batchCreate`: import users with their password
/// hashes, in the shape firebase-admin's `import_users` sends.
struct UserImportRoutes {
    let imports: UserImportService

    /// The answer: one entry per refused user.
    struct Answer: ResponseEncodable {
        struct Entry: Encodable {
            let index: Int
            let message: String
        }

        var kind = "identitytoolkit#UploadAccountResponse"
        /// Absent when every user was imported.
        let error: [Entry]?
    }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        for prefix in ["", "tenants/{tenant}/"] {
            group.post("\(prefix)accounts:batchCreate") { request, context in
                let tenantId = context.parameters.get("tenant")
                let admin = try context.requireAdmin(for: tenantId.map(AdminTarget.tenant) ?? .project)
                let body = try await request.decode(as: JSONValue.self, context: context)
                guard case .array(let users)? = body.value(at: ["users"]) else {
                    throw AuthError(.invalidArgument, detail: "users must be a list")
                }
                let failures = try await imports.importUsers(
                    tenant: TenantScope(tenantId), records: users, hashConfig: UserImportPolicy.hashConfig(of: body), actor: admin.actor)
                return Answer(error: failures.isEmpty ? nil : failures.map { .init(index: $0.index, message: $0.message) })
            }
        }
    }
}
