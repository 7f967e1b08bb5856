import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto

/// `/v1/accounts:*`: the end-user Identity Toolkit endpoints (API key required).
struct AccountRoutes {
    let accounts: AccountService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("accounts:signUp") { request, context in
            let body = try await EndUserRequest(request, context: context)
            let result = try await accounts.signUp(
                tenantId: body.tenantId, email: body.string("email"), password: body.string("password"),
                profile: .init(displayName: body.string("displayName"), photoURL: body.string("photoUrl")),
                idToken: body.string("idToken"), client: context.clientAddress)
            var members: [String: JSONValue] = [
                "kind": .string("identitytoolkit#SignupNewUserResponse"), "localId": .string(result.user.uid),
            ]
            if let email = result.user.email { members["email"] = .string(email) }
            if let name = result.user.displayName { members["displayName"] = .string(name) }
            UserResource.add(result.tokens, to: &members)
            return JSONResponse.make(.object(members))
        }
        group.post("accounts:signInWithPassword") { request, context in
            let body = try await EndUserRequest(request, context: context)
            let result = try await accounts.signIn(
                tenantId: body.tenantId, email: body.string("email"), password: body.string("password"),
                client: context.clientAddress)
            var members: [String: JSONValue] = [
                "kind": .string("identitytoolkit#VerifyPasswordResponse"), "localId": .string(result.user.uid),
                "email": .string(result.user.email ?? ""), "displayName": .string(result.user.displayName ?? ""),
                "registered": .bool(true),
            ]
            UserResource.add(result.tokens, to: &members)
            return JSONResponse.make(.object(members))
        }
        group.post("accounts:lookup") { request, context in
            let body = try await EndUserRequest(request, context: context)
            let user = try await accounts.lookup(idToken: body.string("idToken"), tenantId: body.tenantId)
            return JSONResponse.make(
                .object(["kind": .string("identitytoolkit#GetAccountInfoResponse"), "users": .array([UserResource.json(user)])]))
        }
        group.post("accounts:update") { request, context in
            let body = try await EndUserRequest(request, context: context)
            let deletions = try body.body.array("deleteAttribute")?.compactMap { value -> String? in
                if case .string(let name) = value { return name }
                return nil
            }
            let (user, tokens) = try await accounts.update(
                idToken: body.string("idToken"), tenantId: body.tenantId,
                changes: .init(
                    email: body.string("email"), password: body.string("password"),
                    profile: .init(displayName: body.string("displayName"), photoURL: body.string("photoUrl")),
                    deleteAttributes: Set(deletions ?? [])))
            guard case .object(var members) = UserResource.json(user) else { throw AuthError(.internalError) }
            members["kind"] = .string("identitytoolkit#SetAccountInfoResponse")
            if let tokens { UserResource.add(tokens, to: &members) }
            return JSONResponse.make(.object(members))
        }
        group.post("accounts:delete") { request, context in
            let body = try await EndUserRequest(request, context: context)
            try await accounts.deleteSelf(idToken: body.string("idToken"), tenantId: body.tenantId)
            return JSONResponse.make(.object(["kind": .string("identitytoolkit#DeleteAccountResponse")]))
        }
        group.post("accounts:createAuthUri") { request, context in
            let body = try await EndUserRequest(request, context: context)
            let methods = try await accounts.signInMethods(
                tenantId: body.tenantId, email: body.string("identifier") ?? body.string("email"))
            var members: [String: JSONValue] = [
                "kind": .string("identitytoolkit#CreateAuthUriResponse"), "sessionId": .string(SessionID.make()),
            ]
            if let methods {
                members["registered"] = .bool(!methods.isEmpty)
                members["allProviders"] = .array(methods.map(JSONValue.string))
                members["signinMethods"] = .array(methods.map(JSONValue.string))
            }
            return JSONResponse.make(.object(members))
        }
    }
}

/// `createAuthUri`'s opaque `sessionId` (unused by Portcullis; SDKs expect one).
enum SessionID {
    static func make() -> String { String(SecretToken.random(byteCount: 20).prefix(27)) }
}
