import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

/// Custom tokens that are malformed, forged, mis-scoped or out of date.
extension CustomTokenTests {
    @Test("every malformed, forged, mis-scoped or out-of-date token is refused with its code")
    func rejections() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let other = try await gateway.createTenant()
            let signer = try await TestSigner.create(gateway)
            let tenantSigner = try await TestSigner.create(gateway, tenant: tenant)
            let otherSigner = try await TestSigner.create(gateway, tenant: other)
            let now = Int64(Date().timeIntervalSince1970)
            let stranger = TestSigner(
                keyId: signer.keyId, email: signer.email, privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
            func unsigned(_ header: JSONValue, _ claims: [String: JSONValue], signature: [UInt8] = []) -> String {
                Base64URL.encode(header.serializedBytes()) + "." + Base64URL.encode(JSONValue.object(claims).serializedBytes()) + "."
                    + Base64URL.encode(signature)
            }
            // HS256 keyed with the public key: the classic algorithm confusion.
            let hsHeader = JSONValue.object(["alg": "HS256", "typ": "JWT", "kid": .string(signer.keyId)])
            let hsInput =
                Base64URL.encode(hsHeader.serializedBytes()) + "."
                + Base64URL.encode(JSONValue.object(signer.claims(uid: "u")).serializedBytes())
            let hsKey = SymmetricKey(data: Data(signer.privateKey.publicKey.pemRepresentation.utf8))
            let hs256 = hsInput + "." + Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Data(hsInput.utf8), using: hsKey)))

            let cases: [(String, String, String?, String)] = [
                ("empty token", "", nil, "MISSING_CUSTOM_TOKEN"),
                ("not a JWT", "not.a.jwt", nil, "INVALID_CUSTOM_TOKEN"),
                ("two parts", "eyJhbGciOiJSUzI1NiJ9.e30", nil, "INVALID_CUSTOM_TOKEN"),
                (
                    "alg none", unsigned(.object(["alg": "none", "kid": .string(signer.keyId)]), signer.claims(uid: "u")), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                ("HS256 with the public key", hs256, nil, "INVALID_CUSTOM_TOKEN"),
                ("an unknown kid", try signer.mint(uid: "u", kid: String(repeating: "0", count: 40)), nil, "INVALID_CUSTOM_TOKEN"),
                ("an unknown kid is not retried by email", try signer.mint(uid: "u", kid: "nope"), nil, "INVALID_CUSTOM_TOKEN"),
                (
                    "no kid and an unknown email",
                    try signer.mint(uid: "u", ["iss": "who@example.com", "sub": "who@example.com"], kid: .some(nil)),
                    nil, "INVALID_CUSTOM_TOKEN"
                ),
                ("another key's signature", try stranger.mint(uid: "u"), nil, "INVALID_CUSTOM_TOKEN"),
                ("another key's signature, no kid", try stranger.mint(uid: "u", kid: .some(nil)), nil, "INVALID_CUSTOM_TOKEN"),
                ("wrong aud", try signer.mint(uid: "u", ["aud": .string(TestGateway.projectId)]), nil, "INVALID_CUSTOM_TOKEN"),
                ("iss of another signer", try signer.mint(uid: "u", ["iss": "who@example.com"]), nil, "CREDENTIAL_MISMATCH"),
                (
                    "expired", try signer.mint(uid: "u", ["iat": .integer(now - 3700), "exp": .integer(now - 100)]), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                (
                    "exp beyond iat + 1 h", try signer.mint(uid: "u", ["iat": .integer(now), "exp": .integer(now + 3601)]), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                (
                    "iat in the future", try signer.mint(uid: "u", ["iat": .integer(now + 300), "exp": .integer(now + 600)]), nil,
                    "INVALID_CUSTOM_TOKEN"
                ),
                ("empty uid", try signer.mint(uid: ""), nil, "INVALID_CUSTOM_TOKEN"),
                ("uid of 129 characters", try signer.mint(uid: String(repeating: "u", count: 129)), nil, "INVALID_CUSTOM_TOKEN"),
                ("a reserved claim", try signer.mint(uid: "u", ["claims": .object(["auth_time": 1])]), nil, "FORBIDDEN_CLAIM : auth_time"),
                (
                    "claims over 1000 bytes",
                    try signer.mint(uid: "u", ["claims": .object(["big": .string(String(repeating: "x", count: 1000))])]),
                    nil, "CLAIMS_TOO_LARGE"
                ),
                (
                    "a tenant account's token presented to another tenant",
                    try otherSigner.mint(uid: "u", ["tenant_id": .string(other)]), tenant, "TENANT_ID_MISMATCH"
                ),
                // Its key is unknown to the tenant it claims (keys are looked up in the tenants a request names).
                (
                    "a tenant account signing for another tenant",
                    try tenantSigner.mint(uid: "u", ["tenant_id": .string(other)]), other, "INVALID_CUSTOM_TOKEN"
                ),
                (
                    "a tenant account's token presented to project users",
                    try tenantSigner.mint(uid: "u", ["tenant_id": .string(tenant)]), nil, "TENANT_ID_MISMATCH"
                ),
                ("a tenant account's token without tenant_id", try tenantSigner.mint(uid: "u"), tenant, "TENANT_ID_MISMATCH"),
                (
                    "tenant_id ≠ the request's tenantId", try signer.mint(uid: "u", ["tenant_id": .string(tenant)]), other,
                    "TENANT_ID_MISMATCH"
                ),
                ("tenant_id for project users", try signer.mint(uid: "u", ["tenant_id": .string(tenant)]), nil, "TENANT_ID_MISMATCH"),
                ("a project token presented to a tenant", try signer.mint(uid: "u"), tenant, "TENANT_ID_MISMATCH"),
                ("an unknown tenant", try signer.mint(uid: "u"), "no-such-tenant", "TENANT_NOT_FOUND"),
            ]
            for (what, token, requestTenant, expected) in cases {
                let response = try await Self.signIn(gateway, token, tenant: requestTenant)
                #expect(response.errorMessage?.hasPrefix(expected) == true, "\(what): \(String(buffer: response.body))")
                response.expectEnvelope(.badRequest, expected)
            }
            let missing = try await gateway.endUser("accounts:signInWithCustomToken", [:])
            missing.expectEnvelope(.badRequest, "MISSING_CUSTOM_TOKEN")
            try await gateway.endUser("accounts:signInWithCustomToken", ["token": .array([])]).expectEnvelope(
                .badRequest, "INVALID_ARGUMENT")
            try await gateway.endUser("accounts:signInWithCustomToken", ["token": .string(try signer.mint(uid: "u"))], key: "wrong")
                .expectEnvelope(.badRequest, "API key not valid")
            // Nothing above created a user.
            let lookup = try await gateway.send(.post, "/v1/projects/\(TestGateway.projectId)/accounts:lookup", json: #"{"localId":["u"]}"#)
            #expect(try lookup.json().value(at: ["users"]) == nil)
        }
    }
}
