import PortcullisCore
import PortcullisJSON
import Testing

@Suite("JWT claim reading")
struct JWTClaimSetTests {
    static let now: Int64 = 1_800_000_000

    @Test(
        "aud is one string or the strings of an array; anything else names no audience",
        arguments: [
            (JSONValue.string("app"), ["app"]),
            (.array([.string("a"), .integer(7), .string("app")]), ["a", "app"]),
            (.array([]), []),
            (.integer(1), []),
            (.object(["aud": .string("app")]), []),
            (.null, []),
        ] as [(JSONValue, [String])])
    func audiences(aud: JSONValue, expected: [String]) {
        let claims = JWTClaimSet(["aud": aud])
        #expect(claims.audiences == expected)
        #expect(claims.isAddressed(to: ["app"]) == expected.contains("app"))
        #expect(!JWTClaimSet([:]).isAddressed(to: ["app"]))
    }

    @Test(
        "a NumericDate is a number of whole seconds; strings, booleans and absurd numbers are no date",
        arguments: [
            (JSONValue.integer(1_800_000_000), Int64?.some(1_800_000_000)),
            (.double(1_800_000_000.9), 1_800_000_000),
            (.double(-1.5), -1),
            (.double(1e16), nil),
            (.double(.infinity), nil),
            (.string("1800000000"), nil),
            (.bool(true), nil),
        ] as [(JSONValue, Int64?)])
    func numericDates(value: JSONValue, expected: Int64?) {
        #expect(JWTClaimSet(["exp": value]).numericDate("exp") == expected)
    }

    @Test("a string claim of another type reads as absent")
    func strings() {
        let claims = JWTClaimSet(["iss": .string("me"), "sub": .integer(3)])
        #expect(claims.string("iss") == "me")
        #expect(claims.string("sub") == nil)
        #expect(claims.string("missing") == nil)
    }

    static func times(exp: JSONValue?, iat: JSONValue?, nbf: JSONValue? = nil) -> JWTClaimSet {
        var members: [String: JSONValue] = [:]
        members["exp"] = exp
        members["iat"] = iat
        members["nbf"] = nbf
        return JWTClaimSet(members)
    }

    @Test("lapse: exp strictly after now (less the expiry leeway); iat and nbf at most the issue leeway ahead")
    func lapses() {
        let now = Self.now
        func lapse(_ claims: JWTClaimSet, expiry: Int64 = 0, issue: Int64 = 60) -> JWTClaimSet.Lapse? {
            claims.lapse(at: now, expiryLeeway: expiry, issueLeeway: issue)
        }
        #expect(lapse(Self.times(exp: .integer(now + 1), iat: .integer(now))) == nil)
        #expect(lapse(Self.times(exp: .integer(now), iat: .integer(now - 10))) == .expired)
        #expect(lapse(Self.times(exp: .integer(now), iat: .integer(now - 10)), expiry: 60) == nil)
        #expect(lapse(Self.times(exp: .integer(now - 60), iat: .integer(now - 100)), expiry: 60) == .expired)
        #expect(lapse(Self.times(exp: nil, iat: .integer(now))) == .noExpiry)
        #expect(lapse(Self.times(exp: .string("later"), iat: .integer(now))) == .noExpiry)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: nil)) == .noIssueTime)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: .integer(now + 60))) == nil)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: .integer(now + 61))) == .issuedInFuture)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: .integer(now + 1)), issue: 0) == .issuedInFuture)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: .integer(now), nbf: .null)) == nil)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: .integer(now), nbf: .integer(now + 60))) == nil)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: .integer(now), nbf: .integer(now + 61))) == .notYetValid)
        #expect(lapse(Self.times(exp: .integer(now + 100), iat: .integer(now), nbf: .string("soon"))) == .notYetValid)
    }
}
