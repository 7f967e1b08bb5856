import PortcullisCore
import PortcullisJSON
import Testing

@Suite("Custom-token policy")
struct CustomTokenPolicyTests {
    static let now: Int64 = 1_800_000_000
    static let email = "signer@test-project.iam.gserviceaccount.com"

    /// One token: a valid one with `changes` applied (`nil` removes a claim).
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var changes: [String: JSONValue?] = [:]
        /// The signer's tenant (`nil`: a project service account).
        var signerTenant: String?
        var requestTenant: String?
        let expected: AuthError?
        var testDescription: String { "\(name) → \(expected?.message ?? "accepted")" }

        var claims: [String: JSONValue] {
            var claims: [String: JSONValue] = [
                "aud": .string(CustomTokenPolicy.audience), "iss": .string(email), "sub": .string(email),
                "iat": .integer(now - 10), "exp": .integer(now + 3000), "uid": "user-1",
            ]
            for (name, value) in changes { claims[name] = value }
            return claims
        }
    }

    static func invalid(_ detailPrefix: String = "") -> AuthError { AuthError(.invalidCustomToken, detail: detailPrefix) }

    @Test(
        "decisions",
        arguments: [
            Case(name: "valid, project users", expected: nil),
            Case(
                name: "aud as an array containing the audience", changes: ["aud": .array([.string(CustomTokenPolicy.audience)])],
                expected: nil),
            Case(name: "wrong aud", changes: ["aud": "test-project"], expected: invalid()),
            Case(name: "no aud", changes: ["aud": nil], expected: invalid()),
            Case(name: "no iss", changes: ["iss": nil], expected: invalid()),
            Case(name: "iss of another signer", changes: ["iss": "other@example.com"], expected: AuthError(.credentialMismatch)),
            Case(name: "sub of another signer", changes: ["sub": "other@example.com"], expected: AuthError(.credentialMismatch)),
            Case(name: "no iat", changes: ["iat": nil], expected: invalid()),
            Case(name: "iat as text", changes: ["iat": .string(String(now))], expected: invalid()),
            Case(name: "iat 60 s ahead (skew)", changes: ["iat": .integer(now + 60), "exp": .integer(now + 600)], expected: nil),
            Case(name: "iat 61 s ahead", changes: ["iat": .integer(now + 61), "exp": .integer(now + 600)], expected: invalid()),
            Case(name: "no exp", changes: ["exp": nil], expected: invalid()),
            Case(name: "expired", changes: ["iat": .integer(now - 3600), "exp": .integer(now)], expected: invalid()),
            Case(name: "exp = iat + 1 h", changes: ["exp": .integer(now - 10 + 3600)], expected: nil),
            Case(name: "exp > iat + 1 h", changes: ["exp": .integer(now - 10 + 3601)], expected: invalid()),
            Case(
                name: "fractional times", changes: ["iat": .double(Double(now) - 0.5), "exp": .double(Double(now) + 100.5)], expected: nil),
            Case(name: "no uid", changes: ["uid": nil], expected: invalid()),
            Case(name: "empty uid", changes: ["uid": ""], expected: invalid()),
            Case(name: "uid of 128 characters", changes: ["uid": .string(String(repeating: "u", count: 128))], expected: nil),
            Case(name: "uid of 129 characters", changes: ["uid": .string(String(repeating: "u", count: 129))], expected: invalid()),
            Case(name: "numeric uid", changes: ["uid": .integer(42)], expected: invalid()),
            Case(name: "claims", changes: ["claims": .object(["role": "admin", "level": 3])], expected: nil),
            Case(name: "null claims", changes: ["claims": .null], expected: nil),
            Case(name: "claims not an object", changes: ["claims": "admin"], expected: AuthError(.invalidClaims)),
            Case(name: "reserved claim", changes: ["claims": .object(["sub": "x"])], expected: AuthError(.forbiddenClaim, detail: "sub")),
            Case(
                name: "firebase claim", changes: ["claims": .object(["firebase": "x"])],
                expected: AuthError(.forbiddenClaim, detail: "firebase")),
            Case(
                name: "claims over 1000 bytes", changes: ["claims": .object(["big": .string(String(repeating: "x", count: 1000))])],
                expected: AuthError(.claimsTooLarge)),
            Case(name: "tenant_id for project users", changes: ["tenant_id": "acme"], expected: AuthError(.tenantIdMismatch)),
            Case(name: "no tenant_id for a tenant", requestTenant: "acme", expected: AuthError(.tenantIdMismatch)),
            Case(name: "project signer, tenant token", changes: ["tenant_id": "acme"], requestTenant: "acme", expected: nil),
            Case(
                name: "project signer, token for another tenant", changes: ["tenant_id": "acme"], requestTenant: "other",
                expected: AuthError(.tenantIdMismatch)),
            Case(name: "empty tenant_id is project users", changes: ["tenant_id": ""], expected: nil),
            Case(name: "tenant_id not a string", changes: ["tenant_id": .integer(1)], expected: invalid()),
            Case(
                name: "tenant signer, own tenant", changes: ["tenant_id": "acme"], signerTenant: "acme", requestTenant: "acme",
                expected: nil),
            Case(
                name: "tenant signer, no tenant_id", signerTenant: "acme", requestTenant: "acme", expected: AuthError(.tenantIdMismatch)),
            Case(
                name: "tenant signer, project users", signerTenant: "acme", requestTenant: nil, expected: AuthError(.tenantIdMismatch)),
            Case(
                name: "tenant signer, another tenant", changes: ["tenant_id": "other"], signerTenant: "acme", requestTenant: "other",
                expected: AuthError(.tenantIdMismatch)),
        ])
    func decide(_ test: Case) {
        let signer = CustomTokenPolicy.Signer(email: Self.email, tenantId: test.signerTenant)
        let decide = { () throws(AuthError) in
            try CustomTokenPolicy.accept(test.claims, signer: signer, requestTenantId: test.requestTenant, now: Self.now)
        }
        guard let expected = test.expected else {
            #expect(throws: Never.self) { try decide() }
            return
        }
        let error = #expect(throws: AuthError.self) { try decide() }
        #expect(error?.code == expected.code)
        if let detail = expected.detail, !detail.isEmpty { #expect(error?.detail == detail) }
    }

    @Test("an accepted token gives its uid and its claims")
    func accepted() throws {
        let claims: [String: JSONValue] = [
            "aud": .string(CustomTokenPolicy.audience), "iss": .string(Self.email), "sub": .string(Self.email),
            "iat": .integer(Self.now), "exp": .integer(Self.now + 3600), "uid": "u-7", "tenant_id": "acme",
            "claims": .object(["premium": true]),
        ]
        let accepted = try CustomTokenPolicy.accept(
            claims, signer: .init(email: Self.email, tenantId: "acme"), requestTenantId: "acme", now: Self.now)
        #expect(accepted.uid == "u-7")
        #expect(accepted.developerClaims == ["premium": true])
    }
}
