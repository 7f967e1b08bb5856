import PortcullisJSON

extension FederatedCredential {
    /// Reads `signInWithIdp`'s `postBody`: a URL-encoded form with `providerId` and
    /// `id_token` or `access_token` (and an optional `nonce`).
    ///
    /// `INVALID_IDP_RESPONSE` when it names no provider or carries neither token;
    /// `INVALID_ARGUMENT` when it is not a form.
    public init(postBody: String) throws(AuthError) {
        guard let fields = URLEncodedForm.fields(Array(postBody.utf8)) else {
            throw AuthError(.invalidArgument, detail: "postBody is not a URL-encoded form")
        }
        guard let providerId = fields["providerId"], !providerId.isEmpty else {
            throw AuthError(.invalidIdpResponse, detail: "postBody has no providerId")
        }
        let idToken = fields["id_token"].flatMap { $0.isEmpty ? nil : $0 }
        let accessToken = fields["access_token"].flatMap { $0.isEmpty ? nil : $0 }
        guard idToken != nil || accessToken != nil else {
            throw AuthError(.invalidIdpResponse, detail: "postBody has neither id_token nor access_token")
        }
        self.init(
            providerId: providerId, idToken: idToken, accessToken: accessToken,
            nonce: fields["nonce"].flatMap { $0.isEmpty ? nil : $0 })
    }
}
