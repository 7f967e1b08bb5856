import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// Each end-user answer carries exactly the fields of Google's (the Identity Toolkit
/// discovery document's response types and the emulator's `operations.ts`), with Google's
/// types: int64 values as strings, absent values left out, the `passwordHash` placeholder
/// where Google shows one. Clients such as firebasil refuse unknown fields; the SDKs read
/// the ones listed in `Tests/interop/sdk_requests`.
@Suite("Wire shapes of end-user answers")
struct WireShapeTests {
    /// The keys of an answer's top-level object.
    static func keys(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) throws -> Set<String> {
        #expect(response.status == .ok, "\(String(buffer: response.body))", sourceLocation: sourceLocation)
        guard case .object(let members) = try response.json() else { throw TestSetupError("not an object") }
        return Set(members.keys)
    }

    static let tokenFields: Set<String> = ["idToken", "refreshToken", "expiresIn"]
    static let userInfoFields: Set<String> = [
        "localId", "email", "emailVerified", "displayName", "photoUrl", "disabled", "tenantId", "passwordHash",
        "passwordUpdatedAt", "validSince", "createdAt", "lastLoginAt", "lastRefreshAt", "customAttributes",
        "providerUserInfo",
    ]
    static let setAccountInfoFields = Set([
        "kind", "localId", "email", "displayName", "photoUrl", "providerUserInfo", "passwordHash", "emailVerified", "newEmail",
    ]).union(tokenFields)

    /// The one user of a lookup, with Google's types checked.
    static func lookedUp(
        _ gateway: TestGateway, _ idToken: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: JSONValue] {
        let response = try await gateway.endUser("accounts:lookup", ["idToken": .string(idToken)])
        #expect(try keys(response, sourceLocation: sourceLocation) == ["kind", "users"], sourceLocation: sourceLocation)
        let users = try response.json().list(at: ["users"])
        guard users.count == 1, case .object(let user) = users[0] else { throw TestSetupError("not one user") }
        #expect(Set(user.keys).isSubset(of: userInfoFields), "\(user.keys)", sourceLocation: sourceLocation)
        for key in ["createdAt", "lastLoginAt", "validSince"] {
            guard case .string(let text)? = user[key], Int64(text) != nil else {
                Issue.record("\(key) is not an int64 string: \(String(describing: user[key]))", sourceLocation: sourceLocation)
                continue
            }
        }
        guard case .string(let refreshed)? = user["lastRefreshAt"], refreshed.hasSuffix("Z") else {
            Issue.record("lastRefreshAt is not RFC 3339: \(String(describing: user["lastRefreshAt"]))", sourceLocation: sourceLocation)
            return user
        }
        for link in JSONValue.object(user).list(at: ["providerUserInfo"]) {
            #expect(link.string(at: ["providerId"]) != nil && link.string(at: ["federatedId"]) != nil, sourceLocation: sourceLocation)
        }
        return user
    }

    @Test("a password user: sign-up, sign-in, lookup, update, an applied code, sendOobCode, resetPassword, delete")
    func passwordUser() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            let signUp = try await gateway.endUser(
                "accounts:signUp", ["email": "shape@example.com", "password": "correct horse"], tenant: tenant)
            #expect(try Self.keys(signUp) == Set(["kind", "localId", "email"]).union(Self.tokenFields))
            #expect(try signUp.json().value(at: ["kind"]) == "identitytoolkit#SignupNewUserResponse")
            #expect(try signUp.json().value(at: ["expiresIn"]) == "3600")
            let signIn = try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "shape@example.com", "password": "correct horse"], tenant: tenant)
            #expect(try Self.keys(signIn) == Set(["kind", "localId", "email", "displayName", "registered"]).union(Self.tokenFields))
            let session = try Session(signIn.json())

            // The JS SDK sends no tenantId on lookup and update: the token's tenant answers.
            let user = try await Self.lookedUp(gateway, session.idToken)
            #expect(user["passwordHash"] == "UkVEQUNURUQ=")
            guard case .integer(let updated)? = user["passwordUpdatedAt"] else {
                throw TestSetupError("passwordUpdatedAt is not a number: \(String(describing: user["passwordUpdatedAt"]))")
            }
            #expect(abs(updated - SystemClock().now().milliseconds) < 600_000)
            #expect(user["tenantId"] == .string(tenant) && user["disabled"] == false && user["emailVerified"] == false)

            let profile = try await gateway.endUser(
                "accounts:update", ["idToken": .string(session.idToken), "displayName": "Shape", "returnSecureToken": true])
            #expect(
                try Self.keys(profile)
                    == ["kind", "localId", "email", "displayName", "providerUserInfo", "passwordHash", "emailVerified"])
            #expect(try profile.json().value(at: ["displayName"]) == "Shape")
            let password = try await gateway.endUser(
                "accounts:update", ["idToken": .string(session.idToken), "password": "new horse", "returnSecureToken": true])
            #expect(try Self.keys(password) == Self.setAccountInfoFields.subtracting(["photoUrl", "newEmail"]))

            let sent = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:sendOobCode",
                json:
                    #"{"requestType":"VERIFY_AND_CHANGE_EMAIL","email":"shape@example.com","newEmail":"moved@example.com","returnOobLink":true}"#
            )
            let code = try #require(
                URLComponents(string: try sent.json().string(at: ["oobLink"]) ?? "")?.queryItems?.first { $0.name == "oobCode" }?.value)
            let inspected = try await gateway.endUser("accounts:resetPassword", ["oobCode": .string(code)], tenant: tenant)
            #expect(try Self.keys(inspected) == ["kind", "email", "requestType", "newEmail"])
            #expect(try inspected.json().value(at: ["newEmail"]) == "moved@example.com")
            let applied = try await gateway.endUser("accounts:update", ["oobCode": .string(code)], tenant: tenant)
            #expect(
                try Self.keys(applied)
                    == ["kind", "localId", "email", "displayName", "providerUserInfo", "passwordHash", "emailVerified", "newEmail"])
            #expect(try applied.json().value(at: ["email"]) == "moved@example.com")
            #expect(try applied.json().value(at: ["emailVerified"]) == true)

            let reauthenticated = try await gateway.signIn("moved@example.com", "new horse", tenant: tenant)
            let deleted = try await gateway.endUser("accounts:delete", ["idToken": .string(reauthenticated.idToken)])
            #expect(try Self.keys(deleted) == ["kind"])
        }
    }

    @Test("an anonymous user and a federated user; createAuthUri, /v1/token, custom tokens and signInWithIdp")
    func otherUsers() async throws {
        try await FederationFixture.run(
            tenantSettings: #"{"allowPasswordSignup":true,"enableAnonymousUser":true}"#
        ) { fixture in
            let gateway = fixture.gateway
            let guest = try await gateway.endUser("accounts:signUp", ["returnSecureToken": true], tenant: fixture.tenant)
            #expect(try Self.keys(guest) == Set(["kind", "localId"]).union(Self.tokenFields))
            let guestUser = try await Self.lookedUp(gateway, try Session(guest.json()).idToken)
            #expect(guestUser["passwordHash"] == nil && guestUser["email"] == nil && guestUser["passwordUpdatedAt"] == nil)

            let federated = try await fixture.signIn(
                "google.com", idToken: fixture.idp.idToken(sub: "g-shape", email: "shape@gmail.com"))
            let federatedKeys = try Self.keys(federated)
            // Never a needConfirmation key unless it is true: the JS SDK tests its presence.
            #expect(!federatedKeys.contains("needConfirmation") && federatedKeys.contains("providerId"))
            #expect(
                federatedKeys.isSubset(
                    of: Set([
                        "kind", "federatedId", "providerId", "localId", "email", "emailVerified", "displayName", "fullName",
                        "photoUrl", "isNewUser", "rawUserInfo", "oauthIdToken", "oauthAccessToken",
                    ]).union(Self.tokenFields)))
            let federatedUser = try await Self.lookedUp(gateway, try Session(federated.json()).idToken)
            #expect(federatedUser["passwordHash"] == nil)
            #expect(
                JSONValue.object(federatedUser).list(at: ["providerUserInfo"]).first?.string(at: ["rawId"]) == "g-shape")

            let methods = try await gateway.endUser(
                "accounts:createAuthUri", ["identifier": "shape@gmail.com", "continueUri": "http://localhost"],
                tenant: fixture.tenant)
            #expect(try Self.keys(methods) == ["kind", "registered", "allProviders", "sessionId", "signinMethods"])

            let refreshed = try await gateway.refresh(try Session(federated.json()).refreshToken)
            #expect(
                try Self.keys(refreshed)
                    == ["access_token", "expires_in", "token_type", "refresh_token", "id_token", "user_id", "project_id"])
            #expect(try refreshed.json().value(at: ["expires_in"]) == "3600")

            let signer = try await TestSigner.create(gateway, tenant: fixture.tenant)
            let custom = try await CustomTokenTests.signIn(
                gateway, try signer.mint(uid: "shape-custom", ["tenant_id": .string(fixture.tenant)]), tenant: fixture.tenant)
            #expect(try Self.keys(custom) == Set(["kind", "isNewUser"]).union(Self.tokenFields))
        }
    }

    @Test("the v2 calls: passwordPolicy for validatePassword, recaptchaConfig off without a key, revokeToken answers {}")
    func v2Calls() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(
                #"""
                {"allowPasswordSignup":true,"passwordPolicyConfig":{"passwordPolicyEnforcementState":"ENFORCE",
                 "passwordPolicyVersions":[{"customStrengthOptions":{"minPasswordLength":8,"containsNumericCharacter":true}}]}}
                """#)
            let path = "/identitytoolkit.googleapis.com/v2/passwordPolicy?key=\(TestGateway.apiKey)&tenantId=\(tenant)"
            let policy = try await gateway.client.execute(uri: path, method: .get, headers: [:], body: nil)
            #expect(
                try Self.keys(policy)
                    == [
                        "customStrengthOptions", "allowedNonAlphanumericCharacters", "enforcementState", "forceUpgradeOnSignin",
                        "schemaVersion",
                    ])
            let json = try policy.json()
            #expect(json.value(at: ["schemaVersion"]) == .integer(1))
            #expect(json.value(at: ["enforcementState"]) == "ENFORCE")
            #expect(json.value(at: ["customStrengthOptions", "minPasswordLength"]) == .integer(8))
            #expect(json.value(at: ["customStrengthOptions", "containsNumericCharacter"]) == true)
            #expect(json.value(at: ["customStrengthOptions", "containsLowercaseCharacter"]) == nil)
            let project = try await gateway.client.execute(
                uri: "/v2/passwordPolicy?key=\(TestGateway.apiKey)", method: .get, headers: [:], body: nil)
            #expect(try project.json().value(at: ["customStrengthOptions"]) == .object(["minPasswordLength": .integer(6)]))
            try await gateway.client.execute(uri: "/v2/passwordPolicy", method: .get, headers: [:], body: nil)
                .expectEnvelope(.badRequest, "API key not valid")
            try await gateway.client.execute(
                uri: "/v2/passwordPolicy?key=\(TestGateway.apiKey)&tenantId=no-such-tenant", method: .get, headers: [:], body: nil
            ).expectEnvelope(.badRequest, "TENANT_NOT_FOUND")

            let recaptcha = try await gateway.client.execute(
                uri: "/v2/recaptchaConfig?key=\(TestGateway.apiKey)&clientType=CLIENT_TYPE_WEB&version=RECAPTCHA_ENTERPRISE",
                method: .get, headers: [:], body: nil)
            let config = try recaptcha.json()
            #expect(config.value(at: ["recaptchaKey"]) == nil)
            #expect(config.list(at: ["recaptchaEnforcementState"]).allSatisfy { $0.string(at: ["enforcementState"]) == "OFF" })

            let session = try await gateway.signUp("apple@example.com", "correct horse 1", tenant: tenant)
            let revoked = try await gateway.client.execute(
                uri: "/identitytoolkit.googleapis.com/v2/accounts:revokeToken?key=\(TestGateway.apiKey)", method: .post,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(
                    string: #"{"providerId":"apple.com","tokenType":"ACCESS_TOKEN","token":"apple-token","idToken":"\#(session.idToken)"}"#)
            )
            #expect(try revoked.json() == .object([:]), "\(String(buffer: revoked.body))")
            // iOS sends the enum's number, and no tenant: TenantScope(the) token's tenant is the request's.
            func revoke(_ idToken: String) async throws -> TestResponse {
                try await gateway.client.execute(
                    uri: "/v2/accounts:revokeToken?key=\(TestGateway.apiKey)", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"providerId":"apple.com","tokenType":"3","token":"code","idToken":"\#(idToken)"}"#))
            }
            let ios = try await revoke(session.idToken)
            #expect(ios.status == .ok, "\(String(buffer: ios.body))")
            try await revoke("forged").expectEnvelope(.badRequest, "INVALID_ID_TOKEN")
            let audit = try await gateway.send(.get, "\(gateway.tenants)/\(tenant)/auditEvents")
            #expect(
                try audit.json().list(at: ["auditEvents"]).filter { $0.string(at: ["action"]) == "user.provider_token_revoke" }.count
                    == 2)
        }
    }

    @Test("revokeToken reaches the tenant's Apple revocation endpoint when it has the client secret")
    func appleRevocation() async throws {
        try await FederationFixture.run { fixture in
            let path = "/v2/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/defaultSupportedIdpConfigs/apple.com"
            let configured = try await fixture.gateway.send(
                .patch, "\(path)?updateMask=clientSecret,revocationUri",
                json: #"{"clientSecret":"apple-client-secret-jwt","revocationUri":"\#(fixture.idp.revocationURL)"}"#)
            #expect(configured.status == .ok, "\(String(buffer: configured.body))")
            #expect(try configured.json().value(at: ["clientSecret"]) == nil)
            let session = try await fixture.gateway.signUp("apple-user@example.com", tenant: fixture.tenant)
            let revoked = try await fixture.gateway.client.execute(
                uri: "/v2/accounts:revokeToken?key=\(TestGateway.apiKey)", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(
                    string: #"{"providerId":"apple.com","tokenType":"ACCESS_TOKEN","token":"t0k&n","idToken":"\#(session.idToken)"}"#))
            #expect(try revoked.json() == .object([:]), "\(String(buffer: revoked.body))")
            #expect(
                fixture.idp.revocations == [
                    [
                        "client_id": fixture.idp.audience, "client_secret": "apple-client-secret-jwt", "token": "t0k&n",
                        "token_type_hint": "access_token",
                    ]
                ])
        }
    }
}
