import Foundation

/// The end-user operations, one request each, shared by ``Auth`` and ``User``.
extension IdentityToolkitClient {
    /// Signs in with `credential`, or links it to the user of `linkingTo` (an ID token).
    ///
    /// A federated identity whose email belongs to another account answers
    /// `needConfirmation`: that is ``AuthClientError/Code/accountExistsWithDifferentCredential``.
    func signIn(with credential: AuthCredential, linkingTo idToken: String? = nil) async throws -> SignInResponse {
        switch credential.kind {
        case .password(let email, let password):
            if let idToken {
                // Linking a password is an update of the (anonymous) account.
                return try await post(
                    "accounts:update",
                    ["idToken": .string(idToken), "email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)])
            }
            return try await post(
                "accounts:signInWithPassword", ["email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)])
        case .identityProvider(let providerId, let token, let accessToken, let nonce):
            var postBody = URLComponents()
            postBody.queryItems =
                [URLQueryItem(name: "providerId", value: providerId)]
                + [("id_token", token), ("access_token", accessToken), ("nonce", nonce)].compactMap { name, value in
                    value.map { URLQueryItem(name: name, value: $0) }
                }
            var fields: [String: Field] = [
                "postBody": .string((postBody.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")),
                "requestUri": .string("http://localhost"), "returnSecureToken": .bool(true), "returnIdpCredential": .bool(true),
            ]
            if let idToken { fields["idToken"] = .string(idToken) }
            let answer: SignInResponse = try await post("accounts:signInWithIdp", fields)
            if answer.needConfirmation == true {
                throw AuthClientError(
                    .accountExistsWithDifferentCredential, serverCode: "NEED_CONFIRMATION",
                    detail: "\(answer.email ?? "the email") already signs in another way", email: answer.email)
            }
            return answer
        }
    }

    /// The account behind `idToken`.
    func lookup(idToken: String) async throws -> UserRecord {
        let answer: LookupResponse = try await post("accounts:lookup", ["idToken": .string(idToken)])
        guard let record = answer.users?.first else { throw AuthClientError(.userNotFound, serverCode: "USER_NOT_FOUND") }
        return record
    }
}

/// `accounts:update`'s answer: the user resource, with fresh tokens when the change
/// (email, password) issued them.
struct UpdateResponse: Decodable {
    let record: UserRecord
    let tokens: SignInResponse

    init(from decoder: any Decoder) throws {
        record = try UserRecord(from: decoder)
        tokens = try SignInResponse(from: decoder)
    }
}
