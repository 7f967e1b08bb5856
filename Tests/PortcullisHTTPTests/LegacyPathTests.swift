import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// Older clients: Identity Toolkit v3 paths as aliases of the v1 operations, at the root and
/// under `/www.googleapis.com`; camelCase token bodies; `null` read as absent.
@Suite("Legacy clients")
struct LegacyPathTests {
    /// Where old clients find the v3 operations: the root, and the emulator's host prefix.
    static let prefixes = ["", "/www.googleapis.com"]

    @Test(
        "signupNewUser → verifyPassword → getAccountInfo → setAccountInfo → createAuthUri → deleteAccount, with ?key=",
        arguments: prefixes)
    func accountRoundTrip(prefix: String) async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"old","allowPasswordSignup":true}"#)
            let credentials: [String: JSONValue] = [
                "email": "old@example.com", "password": "correct horse", "returnSecureToken": true, "tenantId": .string(tenant),
            ]
            let signUp = try await gateway.legacy("signupNewUser", credentials, prefix: prefix)
            #expect(signUp.status == .ok, "\(String(buffer: signUp.body))")
            #expect(try signUp.json().value(at: ["kind"]) == "identitytoolkit#SignupNewUserResponse")
            let created = try Session(signUp.json())
            #expect(created.claims.value(at: ["firebase", "tenant"]) == .string(tenant))

            let signIn = try await gateway.legacy("verifyPassword", credentials, prefix: prefix)
            #expect(try signIn.json().value(at: ["kind"]) == "identitytoolkit#VerifyPasswordResponse")
            #expect(try signIn.json().value(at: ["registered"]) == true)
            let session = try Session(signIn.json())
            #expect(session.uid == created.uid)
            try await gateway.legacy("verifyPassword", credentials.merging(["password": "wrong horse"]) { $1 }, prefix: prefix)
                .expectEnvelope(.badRequest, "INVALID_PASSWORD")

            let own: [String: JSONValue] = ["idToken": .string(session.idToken), "tenantId": .string(tenant)]
            let info = try await gateway.legacy("getAccountInfo", own, prefix: prefix).json()
            #expect(info.value(at: ["kind"]) == "identitytoolkit#GetAccountInfoResponse")
            let user = try Self.onlyUser(info)
            #expect(user.value(at: ["localId"]) == .string(created.uid))
            #expect(user.value(at: ["email"]) == "old@example.com")

            let set = try await gateway.legacy(
                "setAccountInfo", own.merging(["displayName": "Old Client", "returnSecureToken": true]) { $1 }, prefix: prefix)
            #expect(set.status == .ok, "\(String(buffer: set.body))")
            #expect(try set.json().value(at: ["kind"]) == "identitytoolkit#SetAccountInfoResponse")
            #expect(try set.json().value(at: ["displayName"]) == "Old Client")
            let renamed = try await gateway.legacy("getAccountInfo", own, prefix: prefix).json()
            #expect(try Self.onlyUser(renamed).value(at: ["displayName"]) == "Old Client")

            let uri = try await gateway.legacy(
                "createAuthUri",
                ["identifier": "old@example.com", "continueUri": "http://localhost", "tenantId": .string(tenant)], prefix: prefix
            )
            .json()
            #expect(uri.value(at: ["kind"]) == "identitytoolkit#CreateAuthUriResponse")
            #expect(uri.value(at: ["registered"]) == true)
            #expect(uri.value(at: ["signinMethods"]) == .array(["password"]))

            let deleted = try await gateway.legacy("deleteAccount", own, prefix: prefix)
            #expect(deleted.status == .ok, "\(String(buffer: deleted.body))")
            #expect(try deleted.json().value(at: ["kind"]) == "identitytoolkit#DeleteAccountResponse")
            try await gateway.legacy("verifyPassword", credentials, prefix: prefix).expectEnvelope(.badRequest, "EMAIL_NOT_FOUND")
            try await gateway.legacy("getAccountInfo", own, prefix: prefix).expectEnvelope(.badRequest, "USER_NOT_FOUND")
        }
    }

    @Test("a v3 path needs the API key like its v1 operation, in ?key= or X-Goog-Api-Key", arguments: prefixes)
    func apiKey(prefix: String) async throws {
        try await TestGateway.run { gateway in
            let body: [String: JSONValue] = ["email": "k@example.com", "password": "correct horse"]
            try await gateway.legacy("verifyPassword", body, prefix: prefix, key: nil)
                .expectEnvelope(.badRequest, "API key not valid")
            try await gateway.legacy("verifyPassword", body, prefix: prefix, key: "not-a-key")
                .expectEnvelope(.badRequest, "API key not valid")
            // With the key in the header instead, the operation answers (project users: password sign-in is off).
            let viaHeader = try await gateway.client.execute(
                uri: "\(prefix)/identitytoolkit/v3/relyingparty/verifyPassword", method: .post,
                headers: [.contentType: "application/json", HTTPField.Name("X-Goog-Api-Key")!: TestGateway.apiKey],
                body: ByteBuffer(string: JSONValue.object(body).serialized()))
            viaHeader.expectEnvelope(.badRequest, "PASSWORD_LOGIN_DISABLED")
        }
    }

    @Test("getOobConfirmationCode reaches sendOobCode: no delivery channel, an unknown email", arguments: prefixes)
    func oobCodeErrors(prefix: String) async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"quiet","allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("quiet@example.com", tenant: tenant)
            try await gateway.legacy(
                "getOobConfirmationCode",
                ["requestType": "PASSWORD_RESET", "email": "quiet@example.com", "tenantId": .string(tenant)], prefix: prefix
            )
            .expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED")
            try await gateway.legacy(
                "getOobConfirmationCode",
                ["requestType": "PASSWORD_RESET", "email": "nobody@example.com", "tenantId": .string(tenant)], prefix: prefix
            )
            .expectEnvelope(.badRequest, "EMAIL_NOT_FOUND")
            try await gateway.legacy("getOobConfirmationCode", ["email": "quiet@example.com", "tenantId": .string(tenant)], prefix: prefix)
                .expectEnvelope(.badRequest, "MISSING_REQ_TYPE")
            try await gateway.legacy("resetPassword", ["oobCode": "no-such-code", "tenantId": .string(tenant)], prefix: prefix)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
        }
    }

    @Test("a reset as an old client does it: getOobConfirmationCode mails the code, resetPassword checks and uses it")
    func passwordReset() async throws {
        try await EmailActionFixture.run { fixture in
            let gateway = fixture.gateway
            let tenant: JSONValue = .string(fixture.tenant)
            let old = try await gateway.signUp("reset@example.com", "old password", tenant: fixture.tenant)
            let sent = try await gateway.legacy(
                "getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "reset@example.com", "tenantId": tenant])
            #expect(sent.status == .ok, "\(String(buffer: sent.body))")
            #expect(try sent.json().value(at: ["kind"]) == "identitytoolkit#GetOobConfirmationCodeResponse")
            #expect(try sent.json().value(at: ["email"]) == "reset@example.com")
            let code = try #require(try await fixture.receiver.waitForDeliveries(1).first?.oobCode)

            let checked = try await gateway.legacy(
                "resetPassword", ["oobCode": .string(code), "tenantId": tenant], prefix: "/www.googleapis.com")
            #expect(try checked.json().value(at: ["kind"]) == "identitytoolkit#ResetPasswordResponse")
            #expect(try checked.json().value(at: ["email"]) == "reset@example.com")
            #expect(try checked.json().value(at: ["requestType"]) == "PASSWORD_RESET")
            let reset = try await gateway.legacy(
                "resetPassword", ["oobCode": .string(code), "newPassword": "new password", "tenantId": tenant])
            #expect(reset.status == .ok, "\(String(buffer: reset.body))")
            _ = try await gateway.signIn("reset@example.com", "new password", tenant: fixture.tenant)
            #expect(try await gateway.refresh(old.refreshToken).status != .ok)
        }
    }

    @Test("verifyCustomToken reaches signInWithCustomToken", arguments: prefixes)
    func customToken(prefix: String) async throws {
        try await TestGateway.run { gateway in
            let signer = try await TestSigner.create(gateway)
            let response = try await gateway.legacy(
                "verifyCustomToken", ["token": .string(try signer.mint(uid: "legacy-1")), "returnSecureToken": true], prefix: prefix)
            let answer = try CustomTokenTests.Answer(response)
            #expect(answer.isNewUser)
            #expect(answer.claims.value(at: ["sub"]) == "legacy-1")
            try await gateway.legacy("verifyCustomToken", ["token": "not.a.token"], prefix: prefix)
                .expectEnvelope(.badRequest, "INVALID_CUSTOM_TOKEN")
        }
    }

    @Test("verifyAssertion reaches signInWithIdp", arguments: prefixes)
    func federated(prefix: String) async throws {
        try await FederationFixture.run { fixture in
            let token = fixture.idp.idToken(sub: "g-1", email: "fed@gmail.com", name: "Fed")
            let response = try await fixture.gateway.legacy(
                "verifyAssertion",
                [
                    "postBody": .string("providerId=google.com&id_token=\(token)"), "requestUri": "http://localhost",
                    "returnSecureToken": true, "tenantId": .string(fixture.tenant),
                ], prefix: prefix)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let json = try response.json()
            #expect(json.value(at: ["kind"]) == "identitytoolkit#VerifyAssertionResponse")
            #expect(json.value(at: ["providerId"]) == "google.com")
            #expect(json.value(at: ["email"]) == "fed@gmail.com")
            #expect(json.value(at: ["isNewUser"]) == true)
            #expect(try Session(json).claims.value(at: ["firebase", "sign_in_provider"]) == "google.com")
        }
    }

}

extension LegacyPathTests {
    /// The one user of a `getAccountInfo` answer.
    static func onlyUser(_ answer: JSONValue) throws -> JSONValue {
        guard case .array(let users)? = answer.value(at: ["users"]), users.count == 1, let user = users.first else {
            throw TestSetupError("not one user: \(answer.serialized())")
        }
        return user
    }
}

extension TestGateway {
    /// `POST <prefix>/identitytoolkit/v3/relyingparty/<operation>?key=…` with a JSON body.
    func legacy(
        _ operation: String, _ body: [String: JSONValue], prefix: String = "", key: String? = TestGateway.apiKey
    ) async throws -> TestResponse {
        let query = key.map { "?key=\($0)" } ?? ""
        return try await client.execute(
            uri: "\(prefix)/identitytoolkit/v3/relyingparty/\(operation)\(query)", method: .post,
            headers: [.contentType: "application/json"], body: ByteBuffer(string: JSONValue.object(body).serialized()))
    }

    /// `POST /v1/token?key=…` with `body` as JSON.
    func token(_ body: [String: JSONValue], path: String = "/v1/token") async throws -> TestResponse {
        try await client.execute(
            uri: "\(path)?key=\(TestGateway.apiKey)", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: JSONValue.object(body).serialized()))
    }
}
