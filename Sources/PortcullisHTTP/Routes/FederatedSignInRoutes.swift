import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `/v1/accounts:signInWithIdp`: federated sign-in, sign-up and linking (API key required).
struct FederatedSignInRoutes {
    let service: FederatedSignInService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("accounts:signInWithIdp") { request, context in
            let body = try await request.decode(as: SignInWithIdpRequest.self, context: context)
            guard let postBody = body.postBody, !postBody.isEmpty else {
                throw AuthError(.invalidIdpResponse, detail: "postBody is required")
            }
            let credential = try FederatedCredential(postBody: postBody)
            let outcome = try await service.signIn(
                tenantId: body.tenant, credential: credential, idToken: body.idToken, client: context.clientAddress)
            return SignInWithIdpResponse(outcome, credential: body.returnIdpCredential == true ? credential : nil)
        }
    }
}
