import PortcullisCore
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
        #expect(TenantSettings().json.value(at: ["scryptParameters"]) == nil)
        // Exactly 16 × the default's work is the most a tenant may ask for.
        #expect(
            try Self.parse(#"{"scryptParameters": {"logN": 18, "r": 1, "p": 8}}"#).scryptParameters?.work == ScryptParameters.maximumWork)
        let settings = try Self.parse(#"{"scryptParameters": {"logN": 16}}"#)
        #expect(settings.scryptParameters == ScryptParameters(logN: 16, r: 8, p: 1))
        #expect(try TenantSettings(json: settings.json) == settings)
    }
}

@Suite("JSON values")
struct JSONValueTests {
    @Test(
        "malformed JSON and invalid UTF-8 are INVALID_ARGUMENT",
        arguments: [
            Array("{".utf8), Array("{\"a\":}".utf8), [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], Array("nul".utf8),
        ])
    func malformed(bytes: [UInt8]) {
        let error = #expect(throws: AuthError.self) { try JSONValue.parse(bytes) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("deep nesting is an error, not a crash")
    func deepNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: AuthError.self) { try JSONValue.parse(Array(deep.utf8)) }
    }

    @Test("booleans, integers, doubles and strings keep their types")
    func types() throws {
        let value = try JSONValue.parse(Array(#"{"b":true,"i":3,"d":1.5,"s":"x","n":null}"#.utf8))
        #expect(value == .object(["b": .bool(true), "i": .integer(3), "d": .double(1.5), "s": .string("x"), "n": .null]))
        #expect(try JSONValue.parse(Array(value.serialized().utf8)) == value)
    }

    @Test("snake_case keys become camelCase, an explicit camelCase key wins")
    func camelCase() throws {
        let value = try JSONValue.parse(Array(#"{"a_bc":{"d_e_f":1},"gH":2,"g_h":3}"#.utf8)).camelCasedKeys()
        #expect(value == .object(["aBc": .object(["dEF": .integer(1)]), "gH": .integer(2)]))
    }
}

@Suite("JSON parser and base64url")
struct JSONParserTests {
    @Test(
        "accepted documents",
        arguments: [
            (
                #" { "a" : [ 1 , -2.5e3 , true , null ] } "#,
                JSONValue.object(["a": .array([.integer(1), .double(-2500), .bool(true), .null])])
            ),
            (#""\u00e9\ud83d\ude00\n\"\\\/""#, .string("é😀\n\"\\/")),
            ("0", .integer(0)),
            ("-0.5", .double(-0.5)),
            ("9223372036854775808", .double(9223372036854775808)),
            (#"{"a":{},"b":[]}"#, .object(["a": .object([:]), "b": .array([])])),
        ])
    func accepted(text: String, expected: JSONValue) throws {
        #expect(try JSONValue.parse(Array(text.utf8)) == expected)
    }

    @Test(
        "refused documents",
        arguments: [
            "", " ", "{", "[1,]", #"{"a":1,}"#, "01", "1.", ".5", "1e", "+1", "tru", "nul", #""\ud83d""#, #""\udc00x""#,
            #""\x""#, "\"a\u{01}b\"", #"{"a" 1}"#, "[1 2]", "1 2", "NaN", "1e999",
        ])
    func refused(text: String) {
        #expect(throws: AuthError.self) { try JSONValue.parse(Array(text.utf8)) }
    }

    @Test("serialization escapes what JSON requires and round-trips")
    func serialization() throws {
        let value = JSONValue.object(["k\"ey": .string("line\nbreak\u{1}\\ é/"), "n": .integer(-3), "d": .double(0.25)])
        #expect(value.serialized() == #"{"d":0.25,"k\"ey":"line\nbreak\u0001\\ é/","n":-3}"#)
        #expect(try JSONValue.parse(Array(value.serialized().utf8)) == value)
    }

    @Test("base64url round-trips every length and refuses other alphabets")
    func base64url() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(Base64URL.decode(encoded) == bytes)
        }
        #expect(Base64URL.encode(Array("hello?>".utf8)) == "aGVsbG8_Pg")
        #expect(Base64URL.decode("aGVsbG8_Pg==") == Array("hello?>".utf8))
        for bad in ["a", "ab+c", "ab/c", "a b", "ab=c", "AB"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
    }
}
