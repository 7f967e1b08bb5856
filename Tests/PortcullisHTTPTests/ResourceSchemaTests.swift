import PortcullisCore
import PortcullisJSON
import Testing

@testable import PortcullisHTTP

@Suite("Admin resource schemas")
struct ResourceSchemaTests {
    static func check(_ schema: ResourceSchema, _ json: String) throws {
        try schema.check(JSONValue.parse(Array(json.utf8)))
    }

    /// Settings with every field the gateway renders set, so the schema is checked against all of them.
    static var everySetting: TenantSettings {
        var settings = TenantSettings()
        settings.displayName = "Acme"
        settings.permissions = .init(disabledUserSignup: true, disabledUserDeletion: true)
        settings.passwordPolicy.enforcementState = .enforce
        settings.trustedEmailDomains = [
            .init(providerId: "microsoft.com", domain: "acme.com", tenantIds: ["8eaef023-2b34-4da1-9baa-8bc8c9d6a490"])
        ]
        settings.scryptParameters = ScryptParameters(logN: 15, r: 8, p: 1)
        settings.authorizedDomains = ["app.acme.com"]
        var delivery = EmailDelivery(channel: .webhook, webhookURI: "https://hooks.acme.com/mail", from: "Acme <no-reply@acme.com>")
        for kind in EmailActionKind.allCases {
            delivery.templates[kind] = EmailTemplate(subject: "s", body: "b")
            delivery.localizedTemplates["pt-br", default: [:]][kind] = EmailTemplate(subject: "s", body: "b")
        }
        settings.emailDelivery = delivery
        return settings
    }

    @Test("every field the gateway renders is one its schema accepts back, for a tenant and the project")
    func rendersWhatItAccepts() throws {
        var document = try TenantResource.fields(Self.everySetting)
        document.setValue(.string("projects/p/tenants/t"), at: ["name"])
        try TenantResource.schema(for: .tenant).check(document)
        try TenantResource.schema(for: .project).check(document)
        let provider = try IdentityProviderResource.provider(
            "oidc.corp",
            from: .object([
                "clientId": "c", "issuer": "https://issuer.example", "clientSecret": "s", "displayName": "Corp",
                "jwksUri": "https://issuer.example/keys", "userInfoUri": "https://issuer.example/me",
                "revocationUri": "https://issuer.example/revoke", "clientIds": .array(["c2"]),
            ]))
        try IdentityProviderResource.schema.check(IdentityProviderResource.storedFields(provider))
    }

    @Test(
        "an unknown name is INVALID_ARGUMENT in Google's words, naming where it sits",
        arguments: [
            (#"{"allowPasswordSigup":true}"#, #"Unknown name "allowPasswordSigup": Cannot find field."#),
            (#"{"client":{"permissions":{"disabledUserSigup":true}}}"#, #"Unknown name "disabledUserSigup" at 'client.permissions'"#),
            (#"{"trustedEmailDomains":[{"providerId":"google.com","domain":"a.com"},{"domian":"b"}]}"#, #"at 'trustedEmailDomains[1]'"#),
            (#"{"emailDelivery":{"templates":{"resetPassword":{"subjet":"x"}}}}"#, #"at 'emailDelivery.templates.resetPassword'"#),
            (
                #"{"emailDelivery":{"localizedTemplates":{"de":{"signIn":{}}}}}"#,
                #"Unknown name "signIn" at 'emailDelivery.localizedTemplates.de'"#
            ),
            (#"{"passwordPolicyConfig":{"passwordPolicyVersions":[{"customStrengthOptions":{"minLength":8}}]}}"#, #""minLength""#),
            (#"{"mfa":{"state":"DISABLED"}}"#, #"Unknown name "mfa""#),
        ])
    func unknownNames(json: String, detail: String) throws {
        let error = #expect(throws: AuthError.self) { try Self.check(TenantResource.schema(for: .tenant), json) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.detail?.hasPrefix("Invalid JSON payload received. Unknown name ") == true)
        #expect(error?.detail?.contains(detail) == true, "\(error?.detail ?? "")")
    }

    @Test("snake_case names match their camelCase fields; a null or mistyped member is left to the reader")
    func spellings() throws {
        try Self.check(
            TenantResource.schema(for: .tenant),
            #"{"allow_password_signup":true,"client":{"permissions":{"disabled_user_signup":true}},"scryptParameters":null}"#)
        try Self.check(TenantResource.schema(for: .tenant), #"{"client":"not an object","trustedEmailDomains":{"a":1}}"#)
    }

    @Test(
        "a field for a feature the gateway lacks passes while it asks for nothing",
        arguments: [
            (#"{"mfaConfig":{"state":"DISABLED","enabledProviders":["PHONE_SMS"]}}"#, true),
            (#"{"mfaConfig":{"providerConfigs":[{"state":"DISABLED","totpProviderConfig":{"adjacentIntervals":5}}]}}"#, true),
            (#"{"mfaConfig":{"state":"STATE_UNSPECIFIED"}}"#, true),
            (#"{"mfaConfig":{"state":"ENABLED"}}"#, false),
            (#"{"mfa_config":{"provider_configs":[{"state":"ENABLED"}]}}"#, false),
            (#"{"recaptchaConfig":{"emailPasswordEnforcementState":"OFF","phoneEnforcementState":"OFF","useSmsBotScore":false}}"#, true),
            (#"{"recaptchaConfig":{"emailPasswordEnforcementState":"AUDIT"}}"#, false),
            (#"{"recaptchaConfig":{"useSmsTollFraudProtection":true}}"#, false),
            (#"{"smsRegionConfig":{}}"#, true),
            (#"{"smsRegionConfig":{"allowByDefault":{"disallowedRegions":["CU"]}}}"#, false),
            (#"{"testPhoneNumbers":{}}"#, true),
            (#"{"testPhoneNumbers":{"+15555550100":"123456"}}"#, false),
            (#"{"autodeleteAnonymousUsers":false}"#, true),
            (#"{"autodeleteAnonymousUsers":true}"#, false),
        ])
    func unsupported(json: String, accepted: Bool) throws {
        if accepted {
            try Self.check(TenantResource.schema(for: .tenant), json)
        } else {
            let error = #expect(throws: AuthError.self) { try Self.check(TenantResource.schema(for: .tenant), json) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.detail?.contains(": Portcullis does not support ") == true, "\(error?.detail ?? "")")
        }
    }

    @Test("an OIDC provider's responseType: ID tokens yes, the authorization-code flow no")
    func responseType() throws {
        try Self.check(IdentityProviderResource.schema, #"{"clientId":"c","responseType":{"idToken":true,"code":false}}"#)
        let error = #expect(throws: AuthError.self) {
            try Self.check(IdentityProviderResource.schema, #"{"clientId":"c","responseType":{"code":true}}"#)
        }
        #expect(error?.detail?.hasPrefix("responseType: Portcullis does not support the authorization-code flow") == true)
        #expect(throws: AuthError.self) { try Self.check(IdentityProviderResource.schema, #"{"clientID":"c"}"#) }
    }

    @Test(
        "update masks name fields down to leaves, anything inside an unsupported field, never `name`",
        arguments: [
            ("client.permissions.disabledUserSignup", true), ("emailDelivery.templates.resetPassword.subject", true),
            ("passwordPolicyConfig.passwordPolicyVersions", true), ("mfaConfig.state", true),
            ("recaptchaConfig.emailPasswordEnforcementState", true), ("name", false), ("mfa", false),
            ("displayName.first", false), ("trustedEmailDomains.domain", false), ("emailDelivery.nope", false),
        ])
    func masks(path: String, allowed: Bool) {
        let components = path.split(separator: ".").map(String.init)
        #expect(TenantResource.schema(for: .tenant).allowsMask(components[...]) == allowed)
    }
}

@Suite("Strict decoding of admin bodies")
struct StrictDecodingTests {
    struct Link: Decodable {
        let providerId: String?
        let rawId: String?
    }

    struct Body: Decodable {
        let localId: String?
        let links: [Link]?
        let link: Link?
        let claims: JSONValue?
    }

    static func decode(_ json: String, strict: Bool = true) throws -> Body {
        try JSONValueDecoder(rejectingUnknownFields: strict).decode(Body.self, from: JSONValue.parse(Array(json.utf8)))
    }

    @Test(
        "a member no declared property asks for is an unknown name, wherever it sits",
        arguments: [
            (#"{"localId":"u","locaId":"v"}"#, #"Unknown name "locaId": Cannot find field."#),
            (#"{"link":{"providerId":"p","rawid":"1"}}"#, #"Unknown name "rawid" at 'link'"#),
            (#"{"links":[{"rawId":"1"},{"raw":"2"}]}"#, #"Unknown name "raw" at 'links[1]'"#),
            (#"{"local_id":"u","link":{"provider_id":"p","extra":1}}"#, #"Unknown name "extra" at 'link'"#),
            (#"{"localId":null,"bogus":null}"#, #"Unknown name "bogus""#),
        ])
    func unknown(json: String, detail: String) throws {
        let error = #expect(throws: JSONInputError.self) { try Self.decode(json) }
        #expect(error?.detail.contains(detail) == true, "\(error?.detail ?? "")")
        // The same body read leniently, as end-user bodies are, ignores the name.
        #expect(throws: Never.self) { try Self.decode(json, strict: false) }
    }

    @Test("declared names in either spelling, nulls and free-form JSONValue members are accepted")
    func accepted() throws {
        let body = try Self.decode(
            #"{"local_id":"u","links":[{"providerId":"p","raw_id":"1"}],"link":null,"claims":{"anything":{"goes":[1]}}}"#)
        #expect(body.localId == "u")
        #expect(body.links?.first?.rawId == "1")
        #expect(body.claims?.value(at: ["anything", "goes"]) == .array([1]))
    }
}
