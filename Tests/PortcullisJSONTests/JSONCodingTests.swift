import PortcullisJSON
import Testing

@Suite("Lenient request decoding and response encoding")
struct JSONCodingTests {
    struct Body: Codable, Equatable {
        var idToken: String?
        var returnSecureToken: Bool?
        var validSince: Int64?
        var localId: [String]?
        var customClaims: JSONValue?
    }

    func decode(_ json: String) throws -> Body {
        try JSONValueDecoder().decode(Body.self, from: JSONValue.parse(Array(json.utf8)))
    }

    @Test(
        "Identity Toolkit's leniency: snake_case keys, numbers and booleans as text, null as absent, unknown fields ignored",
        arguments: [
            (#"{"idToken":"t"}"#, Body(idToken: "t")),
            (#"{"id_token":"t"}"#, Body(idToken: "t")),
            (#"{"id_token":"snake","idToken":"camel"}"#, Body(idToken: "camel")),
            (#"{"idToken":42}"#, Body(idToken: "42")),
            (#"{"idToken":true}"#, Body(idToken: "true")),
            (#"{"returnSecureToken":"TRUE"}"#, Body(returnSecureToken: true)),
            (#"{"return_secure_token":false}"#, Body(returnSecureToken: false)),
            (#"{"validSince":" 1700000000 "}"#, Body(validSince: 1_700_000_000)),
            (#"{"validSince":1700000000.0}"#, Body(validSince: 1_700_000_000)),
            (#"{"idToken":null,"validSince":null}"#, Body()),
            (#"{"id_token":"snake","idToken":null}"#, Body(idToken: "snake")),
            (#"{"idToken":null,"id_token":null}"#, Body()),
            (#"{"unknown":{"deep":[1,2]},"localId":["a",7]}"#, Body(localId: ["a", "7"])),
            ("", Body()),
        ])
    func leniency(json: String, expected: Body) throws {
        #expect(try decode(json.isEmpty ? "{}" : json) == expected)
    }

    @Test(
        "a wrong type is INVALID_ARGUMENT naming the field's path",
        arguments: [
            (#"{"idToken":{}}"#, "Invalid value at 'idToken' (TYPE_STRING)"),
            (#"{"returnSecureToken":"yes"}"#, "Invalid value at 'returnSecureToken' (TYPE_BOOL)"),
            (#"{"validSince":1.5}"#, "Invalid value at 'validSince' (TYPE_INT64)"),
            (#"{"validSince":"soon"}"#, "Invalid value at 'validSince' (TYPE_INT64)"),
            (#"{"localId":["a",["b"]]}"#, "Invalid value at 'localId[1]' (TYPE_STRING)"),
            (#"{"localId":"a"}"#, "Invalid value at 'localId' (expected a list)"),
            (#"{"idToken":"a\u0000b"}"#, "Invalid value at 'idToken' (NUL character)"),
            (#"["idToken"]"#, "Invalid value at 'body' (expected an object)"),
        ])
    func wrongTypes(json: String, detail: String) {
        #expect(throws: JSONInputError(detail)) { try decode(json) }
    }

    @Test("user content arrives untouched: a JSONValue member keeps its snake_case keys")
    func userContentKeepsItsKeys() throws {
        let body = try decode(#"{"custom_claims":{"access_level":3,"team_ids":["x"]}}"#)
        #expect(body.customClaims == .object(["access_level": 3, "team_ids": .array(["x"])]))
    }

    @Test("encoding leaves absent fields out, writes JSONValue members as they are, and sorts keys")
    func encoding() throws {
        let body = Body(idToken: "t", localId: ["a"], customClaims: .object(["z_key": 1, "a": .null]))
        let json = try JSONValueEncoder().encode(body)
        #expect(json.serialized() == #"{"customClaims":{"a":null,"z_key":1},"idToken":"t","localId":["a"]}"#)
        #expect(try JSONValueDecoder().decode(Body.self, from: json) == body)
    }

    /// Remembers, weakly, the encoder each nested value was handed.
    final class EncoderWitness: Encodable, @unchecked Sendable {
        weak var seen: AnyObject?
        func encode(to encoder: any Encoder) throws {
            seen = encoder as AnyObject
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(encoder.codingPath.map(\.stringValue).joined(separator: "."), forKey: AnyKey("path"))
        }
    }

    struct AnyKey: CodingKey {
        let stringValue: String
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    struct Page: Encodable {
        let users: [[String: EncoderWitness]]
    }

    @Test("nested values are encoded with their coding path, and nothing of the encoding outlives it")
    func encodingFreesItsNodes() throws {
        let witnesses = [EncoderWitness(), EncoderWitness()]
        let json = try JSONValueEncoder().encode(Page(users: witnesses.map { ["info": $0] }))
        #expect(json.serialized() == #"{"users":[{"info":{"path":"users.info"}},{"info":{"path":"users.info"}}]}"#)
        // A node holding its parent strongly made a cycle: every nested document encoded stayed in memory.
        #expect(witnesses.allSatisfy { $0.seen == nil })
    }
}
