import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// Admin resource bodies refuse names their resource does not have, as Google's front end
/// does (DESIGN §2): a misspelt switch is 400 naming it, and nothing changes.
@Suite("Admin resource bodies")
struct AdminBodyTests {
    static let project = "/v2/projects/\(TestGateway.projectId)"

    @Test("a misspelt field in any admin resource body is 400 naming it, and nothing is written")
    func misspelt() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"before","allowPasswordSignup":true}"#)
            let uid = try await gateway.createUser(#"{"email":"ada@example.com","password":"correct horse"}"#, tenant: nil)
            let accounts = TestGateway.accounts(tenant: nil)
            let keysBefore = try await gateway.send(.get, "\(Self.project)/adminKeys").json().list(at: ["adminKeys"]).count
            let cases: [(HTTPRequest.Method, String, String, String)] = [
                (.post, gateway.tenants, #"{"displayName":"typo","allowPasswordSigup":true}"#, #"Unknown name "allowPasswordSigup": "#),
                (
                    .patch, "\(gateway.tenants)/\(tenant)?updateMask=displayName",
                    #"{"displayName":"after","client":{"permisions":{"disabledUserSignup":true}}}"#,
                    #"Unknown name "permisions" at 'client'"#
                ),
                (
                    .patch, "\(gateway.tenants)/\(tenant)?updateMask=trustedEmailDomains",
                    #"{"trustedEmailDomains":[{"providerId":"google.com","domian":"example.com"}]}"#,
                    #"Unknown name "domian" at 'trustedEmailDomains[0]'"#
                ),
                (
                    .patch, "\(gateway.tenants)/\(tenant)?updateMask=emailDelivery",
                    #"{"emailDelivery":{"channel":"LOG","localizedTemplates":{"fr":{"resetPasword":{"subject":"x"}}}}}"#,
                    #"Unknown name "resetPasword" at 'emailDelivery.localizedTemplates.fr'"#
                ),
                (
                    .patch, "\(Self.project)/config?updateMask=enableAnonymousUser", #"{"enableAnonymousUsers":true}"#,
                    #"Unknown name "enableAnonymousUsers""#
                ),
                (
                    .post, "\(Self.project)/oauthIdpConfigs?oauthIdpConfigId=oidc.typo",
                    #"{"clientId":"c","issuer":"https://issuer.example","enabled":true,"clientSecert":"s"}"#,
                    #"Unknown name "clientSecert""#
                ),
                (.post, accounts, #"{"email":"grace@example.com","emailVerifed":true}"#, #"Unknown name "emailVerifed""#),
                (.post, accounts + ":update", #"{"localId":"\#(uid)","disabeUser":true}"#, #"Unknown name "disabeUser""#),
                (
                    .post, accounts + ":update",
                    #"{"localId":"\#(uid)","linkProviderUserInfo":{"providerId":"google.com","rawid":"1"}}"#,
                    #"Unknown name "rawid" at 'linkProviderUserInfo'"#
                ),
                (.post, accounts + ":batchDelete", #"{"localId":["\#(uid)"],"force":true}"#, #"Unknown name "localId""#),
                (.post, accounts + ":lookup", #"{"localIds":["\#(uid)"]}"#, #"Unknown name "localIds""#),
                // A misspelt tenantId would otherwise make a project-wide key.
                (.post, "\(Self.project)/adminKeys", #"{"displayName":"ops","tennantId":"\#(tenant)"}"#, #"Unknown name "tennantId""#),
            ]
            for (method, path, body, name) in cases {
                let response = try await gateway.send(method, path, json: body)
                response.expectEnvelope(.badRequest, "INVALID_ARGUMENT : Invalid JSON payload received.")
                #expect(response.errorMessage?.contains(name) == true, "\(path): \(response.errorMessage ?? "")")
            }

            let tenants = try await gateway.send(.get, gateway.tenants).json().list(at: ["tenants"])
            #expect(tenants.count == 1, "only the tenant made before")
            let stored = try await gateway.send(.get, "\(gateway.tenants)/\(tenant)").json()
            #expect(stored.value(at: ["displayName"]) == .string("before"))
            #expect(stored.value(at: ["trustedEmailDomains"]) == .array([]))
            #expect(stored.value(at: ["emailDelivery"]) == nil)
            #expect(try await gateway.send(.get, "\(Self.project)/config").json().value(at: ["enableAnonymousUser"]) == .bool(false))
            try await gateway.send(.get, "\(Self.project)/oauthIdpConfigs/oidc.typo").expectEnvelope(.notFound, "CONFIGURATION_NOT_FOUND")
            let lookup = try await gateway.admin(":lookup", tenant: nil, #"{"email":["grace@example.com"]}"#).json()
            #expect(lookup.value(at: ["users"]) == nil)
            #expect(try await gateway.adminUser(uid, tenant: nil)?.value(at: ["disabled"]) != .bool(true))
            #expect(try await gateway.send(.get, "\(Self.project)/adminKeys").json().list(at: ["adminKeys"]).count == keysBefore)
        }
    }

    @Test("snake_case names, the resource's own name, and a GET's whole answer are accepted back")
    func accepted() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"display_name":"snake","allow_password_signup":true}"#)
            let url = "\(gateway.tenants)/\(tenant)"
            let fetched = try await gateway.send(.get, url)
            #expect(try fetched.json().value(at: ["allowPasswordSignup"]) == .bool(true))
            let replaced = try await gateway.send(.patch, url, json: String(buffer: fetched.body))
            #expect(replaced.status == .ok, "\(String(buffer: replaced.body))")
            #expect(try replaced.json() == fetched.json())

            let provider = try await gateway.send(
                .post, "\(Self.project)/oauthIdpConfigs?oauthIdpConfigId=oidc.corp",
                json: #"{"clientId":"c","issuer":"https://issuer.example","client_secret":"s"}"#)
            #expect(provider.status == .ok, "\(String(buffer: provider.body))")
            let again = try await gateway.send(.patch, "\(Self.project)/oauthIdpConfigs/oidc.corp", json: String(buffer: provider.body))
            #expect(again.status == .ok, "\(String(buffer: again.body))")

            // End-user bodies stay lenient.
            let signUp = try await gateway.send(
                .post, "/v1/accounts:signUp?key=\(TestGateway.apiKey)",
                json:
                    #"{"tenantId":"\#(tenant)","email":"lenient@example.com","password":"correct horse","returnSecureToken":true,"nonsense":1}"#
            )
            #expect(signUp.status == .ok, "\(String(buffer: signUp.body))")
        }
    }

    @Test("Identity Platform fields the Admin SDKs send pass while they ask for nothing, and are refused by name otherwise")
    func unsupported() async throws {
        try await TestGateway.run { gateway in
            // firebase-admin (Node) `createTenant` with multi-factor, reCAPTCHA and SMS regions off.
            let tenant = try await gateway.createTenant(
                #"""
                {"displayName":"sdk","mfaConfig":{"state":"DISABLED","providerConfigs":[{"state":"DISABLED","totpProviderConfig":{"adjacentIntervals":5}}]},
                 "recaptchaConfig":{"emailPasswordEnforcementState":"OFF","useAccountDefender":false},"smsRegionConfig":{},"testPhoneNumbers":{}}
                """#)
            let url = "\(gateway.tenants)/\(tenant)"
            let off = try await gateway.send(.patch, "\(url)?updateMask=mfaConfig.state", json: #"{"mfaConfig":{"state":"DISABLED"}}"#)
            #expect(off.status == .ok, "\(String(buffer: off.body))")
            let config = try await gateway.send(
                .patch, "\(Self.project)/config?updateMask=mfa,mobileLinksConfig.domain",
                json: #"{"mfa":{"state":"DISABLED"},"mobileLinksConfig":{"domain":"DOMAIN_UNSPECIFIED"}}"#)
            #expect(config.status == .ok, "\(String(buffer: config.body))")
            let user = try await gateway.createUser(#"{"email":"mfa@example.com","mfaInfo":[]}"#, tenant: nil)
            let cleared = try await gateway.admin(":update", tenant: nil, #"{"localId":"\#(user)","mfa":{}}"#)
            #expect(cleared.status == .ok, "\(String(buffer: cleared.body))")
            let oidc = try await gateway.send(
                .post, "\(Self.project)/oauthIdpConfigs?oauthIdpConfigId=oidc.implicit",
                json: #"{"clientId":"c","issuer":"https://issuer.example","responseType":{"idToken":true,"code":false}}"#)
            #expect(oidc.status == .ok, "\(String(buffer: oidc.body))")

            let refused: [(HTTPRequest.Method, String, String, String)] = [
                (
                    .patch, "\(url)?updateMask=mfaConfig", #"{"mfaConfig":{"state":"ENABLED","enabledProviders":["PHONE_SMS"]}}"#,
                    "mfaConfig: "
                ),
                (
                    .patch, "\(url)?updateMask=mfaConfig",
                    #"{"mfaConfig":{"state":"DISABLED","providerConfigs":[{"state":"ENABLED"}]}}"#, "mfaConfig: "
                ),
                (
                    .patch, "\(url)?updateMask=recaptchaConfig", #"{"recaptchaConfig":{"emailPasswordEnforcementState":"ENFORCE"}}"#,
                    "recaptchaConfig: "
                ),
                (.patch, "\(url)?updateMask=recaptchaConfig", #"{"recaptcha_config":{"use_account_defender":true}}"#, "recaptcha_config: "),
                (
                    .patch, "\(url)?updateMask=smsRegionConfig", #"{"smsRegionConfig":{"allowlistOnly":{"allowedRegions":["US"]}}}"#,
                    "smsRegionConfig: "
                ),
                (.patch, "\(url)?updateMask=testPhoneNumbers", #"{"testPhoneNumbers":{"+15555550100":"123456"}}"#, "testPhoneNumbers: "),
                (.post, gateway.tenants, #"{"displayName":"a","autodeleteAnonymousUsers":true}"#, "autodeleteAnonymousUsers: "),
                (.patch, "\(Self.project)/config?updateMask=mfa", #"{"mfa":{"state":"ENABLED"}}"#, "mfa: "),
                (
                    .patch, "\(Self.project)/config?updateMask=mobileLinksConfig", #"{"mobileLinksConfig":{"domain":"HOSTING_DOMAIN"}}"#,
                    "mobileLinksConfig: "
                ),
                (
                    .post, "\(Self.project)/oauthIdpConfigs?oauthIdpConfigId=oidc.code",
                    #"{"clientId":"c","issuer":"https://issuer.example","clientSecret":"s","responseType":{"code":true}}"#,
                    "responseType: "
                ),
                (
                    .post, TestGateway.accounts(tenant: nil) + ":update",
                    #"{"localId":"\#(user)","mfa":{"enrollments":[{"phoneInfo":"+15555550100","displayName":"phone"}]}}"#,
                    "mfa.enrollments: "
                ),
                (
                    .post, TestGateway.accounts(tenant: nil),
                    #"{"email":"second@example.com","mfaInfo":[{"phoneInfo":"+15555550100"}]}"#, "mfaInfo: "
                ),
            ]
            for (method, path, body, field) in refused {
                let response = try await gateway.send(method, path, json: body)
                response.expectEnvelope(.badRequest, "INVALID_ARGUMENT : \(field)Portcullis does not support")
            }
            #expect(try await gateway.send(.get, url).json().value(at: ["mfaConfig"]) == nil)
            try await gateway.send(.get, "\(Self.project)/oauthIdpConfigs/oidc.code").expectEnvelope(.notFound, "CONFIGURATION_NOT_FOUND")
            let second = try await gateway.admin(":lookup", tenant: nil, #"{"email":["second@example.com"]}"#).json()
            #expect(second.value(at: ["users"]) == nil)
            // Not every tenant field is the project's: a tenant has `mfaConfig`, the project `mfa`.
            try await gateway.send(.patch, "\(url)?updateMask=displayName", json: #"{"mfa":{}}"#)
                .expectEnvelope(.badRequest, #"INVALID_ARGUMENT : Invalid JSON payload received. Unknown name "mfa""#)
        }
    }
}
