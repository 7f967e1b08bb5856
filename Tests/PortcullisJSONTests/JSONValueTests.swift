import PortcullisJSON
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test(
        "malformed JSON and invalid UTF-8 are INVALID_ARGUMENT",
        arguments: [
            Array("{".utf8), Array("{\"a\":}".utf8), [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], Array("nul".utf8),
        ])
    func malformed(bytes: [UInt8]) {
        #expect(throws: JSONInputError.malformed) { try JSONValue.parse(bytes) }
    }

    @Test("deep nesting is an error, not a crash")
    func deepNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONInputError.malformed) { try JSONValue.parse(Array(deep.utf8)) }
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
        #expect(throws: JSONInputError.malformed) { try JSONValue.parse(Array(text.utf8)) }
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
