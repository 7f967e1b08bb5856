import Crypto
import Foundation
import PortcullisClient
import PortcullisJSON
import PortcullisTestSupport
import Testing
import _CryptoExtras

/// Each client error code, provoked against the real daemon, with the gateway's code kept.
@Suite("Client error mapping")
struct ErrorMappingTests {
    @Test("the tenant's switches: sign-up and self-deletion become adminRestrictedOperation")
    func adminRestricted() async throws {
        try await ClientFixture.run { fixture in
            let auth = fixture.auth()
            let user = try await auth.createUser(email: "kept@example.com", password: "kept-password").user
            let tenant = try #require(fixture.tenant)
            try await fixture.gateway.patchTenant(
                tenant, mask: "client.permissions", #"{"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}"#)
            let signUp = await clientError { try await fixture.auth().createUser(email: "new@example.com", password: "new-password") }
            #expect(
                signUp?.code == .adminRestrictedOperation && signUp?.serverCode == "ADMIN_ONLY_OPERATION", "\(String(describing: signUp))")
            #expect(await clientError { try await fixture.auth().signInAnonymously() }?.code == .adminRestrictedOperation)
            #expect(await clientError { try await user.delete() }?.code == .adminRestrictedOperation)
            #expect(await auth.currentUser?.uid == user.uid, "a refused deletion keeps the user signed in")
        }
    }

    @Test("password sign-in: wrongPassword, userNotFound, emailAlreadyInUse, weakPassword, invalidEmail, userDisabled")
    func passwordErrors() async throws {
        try await ClientFixture.run { fixture in
            let auth = fixture.auth()
            let user = try await auth.createUser(email: "pw@example.com", password: "right-password").user
            #expect(
                await clientError { try await auth.signIn(email: "pw@example.com", password: "wrong-password") }?.code == .wrongPassword)
            #expect(await clientError { try await auth.signIn(email: "no@example.com", password: "whatever1") }?.code == .userNotFound)
            #expect(
                await clientError { try await auth.createUser(email: "pw@example.com", password: "another-1") }?.code == .emailAlreadyInUse)
            let weak = await clientError { try await auth.createUser(email: "weak@example.com", password: "abc") }
            #expect(weak?.code == .weakPassword && weak?.detail != nil, "the detail is kept: \(String(describing: weak))")
            #expect(await clientError { try await auth.createUser(email: "not-an-email", password: "long-enough") }?.code == .invalidEmail)

            try await fixture.adminUpdate(user.uid, #""disableUser":true"#)
            #expect(await clientError { try await auth.signIn(email: "pw@example.com", password: "right-password") }?.code == .userDisabled)
            // The disabled user's own session ends at its next refresh: signed out.
            #expect(await clientError { try await user.idToken(forceRefresh: true) } != nil)
            #expect(await auth.currentUser == nil)
        }
    }

    @Test("under email privacy a wrong password and an unknown email are both invalidCredential")
    func privacy() async throws {
        let tenant =
            #"{"displayName":"private","allowPasswordSignup":true,"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true},"scryptParameters":{"logN":10,"r":1,"p":1}}"#
        try await ClientFixture.run(tenant: tenant) { fixture in
            let auth = fixture.auth()
            try await auth.createUser(email: "hidden@example.com", password: "right-password")
            let wrong = await clientError { try await auth.signIn(email: "hidden@example.com", password: "wrong-password") }
            let unknown = await clientError { try await auth.signIn(email: "nobody@example.com", password: "wrong-password") }
            #expect(wrong?.code == .invalidCredential && unknown?.code == .invalidCredential)
            #expect(wrong?.serverCode == "INVALID_LOGIN_CREDENTIALS")
        }
    }

    @Test("too many failed sign-ins: tooManyRequests")
    func tooManyRequests() async throws {
        try await ClientFixture.run(environment: ["PORTCULLIS_LIMITS_FAILED_SIGN_INS_PER_ACCOUNT": "2"]) { fixture in
            let auth = fixture.auth()
            try await auth.createUser(email: "limited@example.com", password: "right-password")
            var codes: [AuthClientError.Code?] = []
            for _ in 0..<4 {
                codes.append(await clientError { try await auth.signIn(email: "limited@example.com", password: "wrong-password") }?.code)
            }
            #expect(codes.last == .tooManyRequests, "\(codes)")
        }
    }

    @Test("an old sign-in cannot change the password: requiresRecentLogin; reauthenticating fixes it")
    func recentLogin() async throws {
        let tenant =
            #"{"displayName":"recent","allowPasswordSignup":true,"recentLoginWindowSeconds":1,"scryptParameters":{"logN":10,"r":1,"p":1}}"#
        try await ClientFixture.run(tenant: tenant) { fixture in
            let user = try await fixture.auth().createUser(email: "old@example.com", password: "old-password").user
            try await Task.sleep(for: .seconds(2.2))
            let stale = await clientError { try await user.updatePassword("new-password") }
            #expect(stale?.code == .requiresRecentLogin && stale?.serverCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            let mismatch = await clientError {
                try await user.reauthenticate(with: .emailPassword(email: "someone@example.com", password: "x-password"))
            }
            #expect(mismatch?.code == .userMismatch)
            // A one-second window would also catch a sign-in whose hash waited on a loaded
            // machine (auth_time is stamped before hashing).
            try await fixture.gateway.patchTenant(
                try #require(fixture.tenant), mask: "recentLoginWindowSeconds", #"{"recentLoginWindowSeconds":300}"#)
            try await user.reauthenticate(with: .emailPassword(email: "old@example.com", password: "old-password"))
            try await user.updatePassword("new-password")
            try await fixture.auth().signIn(email: "old@example.com", password: "new-password")
        }
    }

    @Test("a custom token: signs in for its tenant; for another tenant it is tenantIdMismatch; garbage is invalidCustomToken")
    func customTokens() async throws {
        try await ClientFixture.run { fixture in
            let tenant = try #require(fixture.tenant)
            let other = try await fixture.gateway.createTenant(#"{"displayName":"other","allowPasswordSignup":true}"#)
            let account = try await fixture.gateway.send(
                "POST", "/v2/projects/\(GatewayDaemon.projectId)/tenants/\(tenant)/serviceAccounts", json: #"{"displayName":"backend"}"#)
            let serviceAccount = try #require(account.json["serviceAccount"] as? [String: Any])
            let token = try Self.customToken(serviceAccount: serviceAccount, uid: "custom-uid", tenant: tenant)

            let result = try await fixture.auth().signIn(withCustomToken: token)
            #expect(result.user.uid == "custom-uid" && result.providerId == "custom")
            #expect(try await result.user.idTokenResult().signInProvider == "custom")
            let mismatch = await clientError { try await fixture.auth(tenant: .some(other)).signIn(withCustomToken: token) }
            #expect(mismatch?.code == .tenantIdMismatch, "\(String(describing: mismatch))")
            #expect(await clientError { try await fixture.auth().signIn(withCustomToken: "not.a.token") }?.code == .invalidCustomToken)
        }
    }

    @Test("a federated identity whose email has an untrusted account: accountExistsWithDifferentCredential with the email")
    func accountExists() async throws {
        try await FakeIdentityProvider.run { idp in
            let environment = ["PORTCULLIS_OUTBOUND_ALLOWED_PRIVATE_NETWORKS": "127.0.0.0/8"]
            try await ClientFixture.run(environment: environment) { fixture in
                let tenant = try #require(fixture.tenant)
                for provider in ["facebook.com", "github.com"] {
                    let configured = try await fixture.gateway.send(
                        "POST", "/v2/projects/\(GatewayDaemon.projectId)/tenants/\(tenant)/defaultSupportedIdpConfigs?idpId=\(provider)",
                        json: #"{"enabled":true,"clientId":"\#(idp.audience)","issuer":"\#(idp.issuer)","jwksUri":"\#(idp.jwksURL)"}"#)
                    #expect(configured.status == 200, "\(configured.text)")
                }
                let auth = fixture.auth()
                let first = try await auth.signIn(
                    with: .identityProvider("facebook.com", idToken: idp.idToken(sub: "fb-1", email: "fed@example.com")))
                #expect(first.isNewUser && first.user.email == "fed@example.com" && first.rawUserInfo != nil)
                let second = await clientError {
                    try await fixture.auth().signIn(
                        with: .identityProvider("github.com", idToken: idp.idToken(sub: "gh-1", email: "fed@example.com")))
                }
                #expect(second?.code == .accountExistsWithDifferentCredential && second?.email == "fed@example.com")
                let forged = await clientError {
                    try await fixture.auth().signIn(
                        with: .identityProvider("facebook.com", idToken: idp.idTokenSignedWithUnpublishedKey(kid: "nope")))
                }
                #expect(forged?.code == .invalidCredential && forged?.serverCode == "INVALID_IDP_RESPONSE")
            }
        }
    }

    @Test("a revoked session: userTokenExpired signs the user out; transport failures are networkRequestFailed; a bad key invalidAPIKey")
    func sessionAndTransport() async throws {
        try await ClientFixture.run { fixture in
            let auth = fixture.auth()
            let user = try await auth.createUser(email: "rev@example.com", password: "rev-password").user
            try await Task.sleep(for: .seconds(1.1))
            try await fixture.adminUpdate(user.uid, #""validSince":"\#(Int(Date().timeIntervalSince1970))""#)
            let revoked = await clientError { try await user.idToken(forceRefresh: true) }
            #expect(revoked?.code == .userTokenExpired && revoked?.serverCode == "TOKEN_EXPIRED")
            #expect(await auth.currentUser == nil)

            var badKey = fixture.configuration()
            badKey.apiKey = "wrong-key"
            #expect(await clientError { try await Auth(configuration: badKey).signInAnonymously() }?.code == .invalidAPIKey)

            var unreachable = fixture.configuration()
            unreachable.baseURL = "http://127.0.0.1:9"
            let down = await clientError { try await Auth(configuration: unreachable).signInAnonymously() }
            #expect(down?.code == .networkRequestFailed && down?.serverCode == nil)
        }
    }

    @Test("every wire code the gateway can answer end users with maps to a code other than internalError")
    func table() {
        for (wire, code) in AuthClientError.wireCodes {
            let error = AuthClientError(wireMessage: "\(wire) : some detail", status: 400)
            #expect(error.code == code && error.code != .internalError && error.serverCode == wire && error.detail == "some detail")
        }
        let unknown = AuthClientError(wireMessage: "SOMETHING_NEW", status: 400)
        #expect(unknown.code == .internalError && unknown.serverCode == "SOMETHING_NEW" && unknown.detail == nil)
        #expect(AuthClientError(wireMessage: "BAD_GATEWAY", status: 502).code == .networkRequestFailed)
    }

    /// A custom token signed with the service account's private key, as an Admin SDK makes it.
    static func customToken(serviceAccount: [String: Any], uid: String, tenant: String?) throws -> String {
        let email = try #require(serviceAccount["client_email"] as? String)
        let pem = try #require(serviceAccount["private_key"] as? String)
        let kid = serviceAccount["private_key_id"] as? String
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        let now = Int64(Date().timeIntervalSince1970)
        var header: [String: JSONValue] = ["alg": "RS256", "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        var claims: [String: JSONValue] = [
            "iss": .string(email), "sub": .string(email), "uid": .string(uid), "iat": .integer(now), "exp": .integer(now + 3600),
            "aud": "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit",
        ]
        if let tenant { claims["tenant_id"] = .string(tenant) }
        let input =
            Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(claims).serializedBytes())
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}
