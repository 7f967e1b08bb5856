import PortcullisCore
import Testing

/// `signInWithIdp`'s `postBody` read as the URL-encoded form it is.
@Suite("Federated postBody")
struct FederatedPostBodyTests {
    @Test("fields are form-decoded (+ is a space, %XX a byte); the first of a repeated field wins; empty pairs are skipped")
    func decoding() throws {
        let credential = try FederatedCredential(
            postBody: "&providerId=oidc.acme&id_token=a%2Eb%2Bc&nonce=two+words%21&id_token=second&&")
        #expect(credential.providerId == "oidc.acme")
        #expect(credential.idToken == "a.b+c")
        #expect(credential.nonce == "two words!")
        #expect(credential.accessToken == nil)
        let utf8 = try FederatedCredential(postBody: "providerId=github.com&access_token=%C3%A9t%C3%A9")
        #expect(utf8.accessToken == "été")
    }

    @Test(
        "what is refused, and how",
        arguments: [
            ("id_token=x", AuthError(.invalidIdpResponse, detail: "postBody has no providerId")),
            ("providerId=&id_token=x", AuthError(.invalidIdpResponse, detail: "postBody has no providerId")),
            ("providerId=google.com&id_token=", AuthError(.invalidIdpResponse, detail: "postBody has neither id_token nor access_token")),
            ("providerId=google.com&id_token=%zz", AuthError(.invalidArgument, detail: "postBody is not a URL-encoded form")),
            ("providerId=google.com&id_token=%C3", AuthError(.invalidArgument, detail: "postBody is not a URL-encoded form")),
            ("providerId=google.com&id_token=%4", AuthError(.invalidArgument, detail: "postBody is not a URL-encoded form")),
        ])
    func refusals(body: String, error: AuthError) {
        #expect(throws: error) { try FederatedCredential(postBody: body) }
    }
}
