import PortcullisCore
import PortcullisJSON
import Testing

@Suite("Tenant settings")
struct TenantSettingsTests {
    static func parse(_ json: String) throws -> TenantSettings {
        try TenantSettings(json: JSONValue.parse(Array(json.utf8)))
    }

    @Test("every switch is off by default, extensions take DESIGN.md's defaults")
    func defaults() throws {
        let settings = try Self.parse("{}")
        #expect(!settings.allowPasswordSignup && !settings.enableAnonymousUser && !settings.disableAuth)
        #expect(!settings.permissions.disabledUserSignup && !settings.permissions.disabledUserDeletion)
        #expect(settings.passwordPolicy.minPasswordLength == 6)
        #expect(settings.signingAlgorithm == .rs256)
        #expect(settings.idTokenLifetimeSeconds == 3600)
        #expect(settings.recentLoginWindowSeconds == 300)
        #expect(settings.refreshTokenReuseGraceSeconds == 10)
        #expect(settings.oobCodeLifetimeSeconds == 3600)
        #expect(settings.trustedEmailDomains.isEmpty)
    }

    @Test("snake_case keys and string booleans and numbers are accepted, like Google's front end")
    func lenient() throws {
        let settings = try Self.parse(
            #"{"allow_password_signup":"true","client":{"permissions":{"disabled_user_signup":true}},"id_token_lifetime_seconds":"600"}"#)
        #expect(settings.allowPasswordSignup)
        #expect(settings.permissions.disabledUserSignup)
        #expect(!settings.permissions.disabledUserDeletion)
        #expect(settings.idTokenLifetimeSeconds == 600)
    }

    @Test("round trip through JSON keeps every field")
    func roundTrip() throws {
        var settings = TenantSettings()
        settings.displayName = "Acme"
        settings.allowPasswordSignup = true
        settings.permissions = .init(disabledUserSignup: true, disabledUserDeletion: true)
        settings.enableImprovedEmailPrivacy = true
        settings.passwordPolicy.minPasswordLength = 10
        settings.passwordPolicy.enforcementState = .enforce
        settings.signingAlgorithm = .edDSA
        settings.recentLoginWindowSeconds = 5
        settings.trustedEmailDomains = [.init(providerId: "google.com", domain: "acme.com")]
        #expect(try TenantSettings(json: settings.json) == settings)
    }

    @Test(
        "wrong types and out-of-range values are INVALID_ARGUMENT naming the field",
        arguments: [
            (#"{"allowPasswordSignup": 3}"#, "allowPasswordSignup"),
            (#"{"client": {"permissions": {"disabledUserSignup": "maybe"}}}"#, "client.permissions.disabledUserSignup"),
            (#"{"client": "x"}"#, "client"),
            (#"{"idTokenLifetimeSeconds": 0}"#, "idTokenLifetimeSeconds"),
            (#"{"idTokenLifetimeSeconds": 86401}"#, "idTokenLifetimeSeconds"),
            (#"{"refreshTokenReuseGraceSeconds": 301}"#, "refreshTokenReuseGraceSeconds"),
            (#"{"oobCodeLifetimeSeconds": 604801}"#, "oobCodeLifetimeSeconds"),
            (#"{"recentLoginWindowSeconds": "soon"}"#, "recentLoginWindowSeconds"),
            (#"{"signingAlgorithm": "HS256"}"#, "signingAlgorithm"),
            (#"{"trustedEmailDomains": [{"providerId": "evil.com", "domain": "a.com"}]}"#, "providerId"),
            (#"{"trustedEmailDomains": {"x": 1}}"#, "trustedEmailDomains"),
            (
                #"{"passwordPolicyConfig": {"passwordPolicyVersions": [{"customStrengthOptions": {"minPasswordLength": 4}}]}}"#,
                "minPasswordLength"
            ),
            (#"{"displayName": ""}"#, "displayName"),
            (#"{"displayName": ["a"]}"#, "displayName"),
            (#"{"scryptParameters": {"logN": 9}}"#, "scryptParameters"),
            (#"{"scryptParameters": {"logN": 17, "r": 8}}"#, "scryptParameters"),
            (#"{"scryptParameters": {"p": 0}}"#, "scryptParameters"),
            // Within 64 MiB but over 16 × the default's work.
            (#"{"scryptParameters": {"logN": 14, "r": 32, "p": 16}}"#, "scryptParameters"),
            (#"{"scryptParameters": {"logN": 18, "r": 8, "p": 1}}"#, "scryptParameters"),
            (#"{"scryptParameters": {"r": "eight"}}"#, "scryptParameters.r"),
        ])
    func rejects(json: String, field: String) throws {
        let error = #expect(throws: AuthError.self) { try Self.parse(json) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
    }

    @Test("a NUL character in a string is refused before it reaches storage")
    func nul() {
        #expect(throws: AuthError.self) { try Self.parse(#"{"displayName": "a\u0000b"}"#) }
    }

    @Test("scrypt parameters are absent by default, take DESIGN.md's defaults for missing members, and round-trip")
    func scryptParameters() throws {
        #expect(TenantSettings().scryptParameters == nil)
        #expect(try TenantSettings().json.value(at: ["scryptParameters"]) == nil)
        // Exactly 16 × the default's work is the most a tenant may ask for.
        #expect(
            try Self.parse(#"{"scryptParameters": {"logN": 18, "r": 1, "p": 8}}"#).scryptParameters?.work == ScryptParameters.maximumWork)
        let settings = try Self.parse(#"{"scryptParameters": {"logN": 16}}"#)
        #expect(settings.scryptParameters == ScryptParameters(logN: 16, r: 8, p: 1))
        #expect(try TenantSettings(json: settings.json) == settings)
    }
}
