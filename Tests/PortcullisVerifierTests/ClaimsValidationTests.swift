import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import PortcullisVerifier

/// The claim checks as a pure decision, for what the real gateway never signs (another
/// audience, a missing `auth_time`, …).
@Suite("Claims validation")
struct ClaimsValidationTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let configuration = VerifierConfiguration(
        gatewayURL: "http://127.0.0.1:1", publicURL: "https://auth.example.com/", projectId: "p", acceptedTenants: .anyTenant)

    /// Genuine-looking claims of user `u1` of tenant `t1`.
    static func claims(_ changes: [String: JSONValue?] = [:]) -> [String: JSONValue] {
        let seconds = now.timeIntervalSince1970
        var claims: [String: JSONValue] = [
            "iss": .string("https://auth.example.com/p/tenants/t1"), "aud": .string("p"), "sub": .string("u1"),
            "user_id": .string("u1"), "iat": .number(seconds - 10), "exp": .number(seconds + 3590),
            "auth_time": .number(seconds - 100), "email": .string("a@example.com"), "email_verified": .bool(true),
            "firebase": .object(["sign_in_provider": .string("password"), "tenant": .string("t1")]),
            "role": .string("admin"), "nbf": .number(seconds - 10), "jti": .string("x"),
        ]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    static func check(_ claims: [String: JSONValue], tenant: String? = "t1") -> TokenVerificationError? {
        do {
            _ = try ClaimsValidation.identity(from: claims, tenant: tenant, configuration: configuration, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test("genuine claims give the identity, with only custom claims in customClaims")
    func accepted() throws {
        let identity = try ClaimsValidation.identity(from: Self.claims(), tenant: "t1", configuration: Self.configuration, now: Self.now)
        #expect(identity.uid == "u1")
        #expect(identity.tenantId == "t1")
        #expect(identity.emailVerified)
        #expect(identity.authTime == Self.now.addingTimeInterval(-100))
        #expect(identity.customClaims == ["role": .string("admin")])
    }

    static let refusals: [(String, [String: JSONValue?], TokenVerificationError)] = [
        ("another audience", ["aud": .string("q")], .wrongAudience),
        ("an audience list", ["aud": .array([.string("p")])], .wrongAudience),
        ("another issuer", ["iss": .string("https://auth.example.com/p/tenants/t2")], .wrongIssuer),
        ("the project's issuer", ["iss": .string("https://auth.example.com/p")], .wrongIssuer),
        ("no issuer", ["iss": nil], .wrongIssuer),
        ("another tenant claim", ["firebase": .object(["sign_in_provider": .string("password"), "tenant": .string("t2")])], .wrongTenant),
        ("no firebase claim", ["firebase": nil], .invalidClaim(name: "firebase")),
        ("no sign-in provider", ["firebase": .object(["tenant": .string("t1")])], .invalidClaim(name: "firebase.sign_in_provider")),
        ("an empty sub", ["sub": .string(""), "user_id": .string("")], .invalidClaim(name: "sub")),
        ("a sub of 129 characters", ["sub": .string(String(repeating: "u", count: 129)), "user_id": nil], .invalidClaim(name: "sub")),
        ("a user_id unlike sub", ["user_id": .string("u2")], .invalidClaim(name: "user_id")),
        ("no auth_time", ["auth_time": nil], .invalidClaim(name: "auth_time")),
        ("a string exp", ["exp": .string("1800003590")], .invalidClaim(name: "exp")),
        ("exp passed beyond the leeway", ["exp": .number(now.timeIntervalSince1970 - 6)], .expired),
        ("iat beyond the skew", ["iat": .number(now.timeIntervalSince1970 + 61)], .issuedInFuture),
        ("auth_time beyond the skew", ["auth_time": .number(now.timeIntervalSince1970 + 61)], .issuedInFuture),
        ("nbf beyond the skew", ["nbf": .number(now.timeIntervalSince1970 + 61)], .issuedInFuture),
        ("a numeric email", ["email": .number(1)], .invalidClaim(name: "email")),
    ]

    @Test("each wrong claim is refused for its reason", arguments: refusals)
    func refused(_ name: String, _ changes: [String: JSONValue?], _ expected: TokenVerificationError) {
        #expect(Self.check(Self.claims(changes)) == expected, "\(name)")
    }

    @Test("the leeways bound exp and iat")
    func leeways() {
        #expect(Self.check(Self.claims(["exp": .number(Self.now.timeIntervalSince1970 - 4)])) == nil)
        #expect(Self.check(Self.claims(["iat": .number(Self.now.timeIntervalSince1970 + 59)])) == nil)
    }

    @Test("a project user's claims are checked against the project issuer")
    func projectUser() {
        let claims = Self.claims([
            "iss": .string("https://auth.example.com/p"), "firebase": .object(["sign_in_provider": .string("anonymous")]),
        ])
        #expect(Self.check(claims, tenant: nil) == .wrongTenant)  // any-tenant mode: not a tenant's user
        var configuration = Self.configuration
        configuration.acceptedTenants = .projectUsers
        #expect(throws: Never.self) {
            try ClaimsValidation.identity(from: claims, tenant: nil, configuration: configuration, now: Self.now)
        }
    }

    @Test("Cache-Control gives the JWKS lifetime")
    func cacheLifetime() {
        let client = GatewayClient(configuration: Self.configuration)
        #expect(client.lifetime(of: ["Cache-Control": "public, max-age=300"]) == .seconds(300))
        #expect(client.lifetime(of: ["Cache-Control": "public, max-age=300", "Age": "100"]) == .seconds(200))
        #expect(client.lifetime(of: ["Cache-Control": "no-store"]) == .zero)
        #expect(client.lifetime(of: ["Cache-Control": "max-age=99999999"]) == .seconds(86_400))
        #expect(client.lifetime(of: [:]) == .seconds(60))
    }

    @Test("the gateway's error envelope gives the revocation detail, sanitised")
    func errorDetail() {
        let body = #"{"error":{"code":401,"message":"UNAUTHENTICATED : TOKEN_EXPIRED","status":"UNAUTHENTICATED"}}"#
        #expect(GatewayClient.errorDetail(.init(string: body)) == "TOKEN_EXPIRED")
        #expect(GatewayClient.errorDetail(.init(string: "not json")) == "UNAUTHENTICATED")
        #expect(GatewayClient.errorDetail(.init(string: #"{"error":{"message":"A : <b>\"x\"</b>"}}"#)) == "bxb")
    }
}
