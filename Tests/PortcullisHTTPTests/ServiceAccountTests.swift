import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// A service account as a test holds it: what signs its custom tokens.
struct TestSigner {
    let keyId: String
    let email: String
    let privateKey: _RSA.Signing.PrivateKey
    /// The service-account file the gateway returned, as text (`nil` for a registered key).
    var file: String?

    /// Creates a service account over HTTP (generated key) and keeps its private key.
    static func create(_ gateway: TestGateway, tenant: String? = nil, key: String? = nil) async throws -> TestSigner {
        let response = try await gateway.send(
            .post, ServiceAccountTests.path(tenant), json: #"{"displayName":"backend"}"#, key: key.map { .some($0) } ?? .none)
        guard response.status == .ok, let json = try? response.json(),
            case .string(let keyId)? = json.value(at: ["keyId"]), case .string(let email)? = json.value(at: ["clientEmail"]),
            case .string(let pem)? = json.value(at: ["serviceAccount", "private_key"]),
            let file = json.value(at: ["serviceAccount"])
        else { throw TestSetupError("service account create failed: \(String(buffer: response.body))") }
        return TestSigner(
            keyId: keyId, email: email, privateKey: try _RSA.Signing.PrivateKey(pemRepresentation: pem), file: file.serialized())
    }

    /// The standard claims of a valid token for `uid`, with `changes` applied (`nil` removes one).
    func claims(uid: String, _ changes: [String: JSONValue?] = [:]) -> [String: JSONValue] {
        let now = Int64(Date().timeIntervalSince1970)
        var claims: [String: JSONValue] = [
            "aud": .string(CustomTokenPolicy.audience), "iss": .string(email), "sub": .string(email),
            "iat": .integer(now), "exp": .integer(now + 3600), "uid": .string(uid),
        ]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    /// A signed custom token, as firebase-admin makes one (`kid` = the key id unless told otherwise).
    func mint(uid: String, _ changes: [String: JSONValue?] = [:], kid: String?? = .none) throws -> String {
        try sign(claims(uid: uid, changes), kid: kid ?? keyId)
    }

    /// Signs `claims` with RS256 under a header naming `kid` (none when `nil`).
    func sign(_ claims: [String: JSONValue], kid: String?) throws -> String {
        var header: [String: JSONValue] = ["alg": "RS256", "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        let input =
            Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(claims).serializedBytes())
        let signature = try privateKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}

@Suite("Service accounts")
struct ServiceAccountTests {
    static func path(_ tenant: String?) -> String {
        let project = "/v2/projects/\(TestGateway.projectId)"
        return tenant.map { "\(project)/tenants/\($0)/serviceAccounts" } ?? "\(project)/serviceAccounts"
    }

    /// A 1024-bit RSA public key: too weak to register.
    static let weakKey = """
        -----BEGIN PUBLIC KEY-----
        MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDfN5Q2N/+HMbpJ53xU4S/HVmsh
        jMqoMbRX8bbvSCM4H1ulmbjYo/TIMP1eaCKYzsbc1hvVEjCLADiSbayVXV3UyffQ
        0GlG98HF5IgX7NWm9O91QDNE3LccgvEJrzGtMrCDbM/YWLwl9asv2y4semzi3FQV
        Aqq0C7L91vuHzR1ZwQIDAQAB
        -----END PUBLIC KEY-----
        """

    @Test("a generated account answers once with a Google service-account file; listing and deleting never show private parts")
    func generated() async throws {
        try await TestGateway.run { gateway in
            let response = try await gateway.send(.post, Self.path(nil), json: #"{"displayName":"backend"}"#)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let json = try response.json()
            guard case .string(let keyId)? = json.value(at: ["keyId"]), case .string(let email)? = json.value(at: ["clientEmail"]) else {
                Issue.record("no keyId or clientEmail: \(json.serialized())")
                return
            }
            #expect(keyId.count == 40 && keyId.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(email.hasPrefix("portcullis-") && email.hasSuffix("@\(TestGateway.projectId).iam.gserviceaccount.com"))
            #expect(json.value(at: ["name"]) == .string("projects/\(TestGateway.projectId)/serviceAccounts/\(keyId)"))
            #expect(json.value(at: ["displayName"]) == "backend")
            #expect(json.value(at: ["createTime"]) != nil)
            let file = json.value(at: ["serviceAccount"])
            #expect(file?.value(at: ["type"]) == "service_account")
            #expect(file?.value(at: ["project_id"]) == .string(TestGateway.projectId))
            #expect(file?.value(at: ["private_key_id"]) == .string(keyId))
            #expect(file?.value(at: ["client_email"]) == .string(email))
            #expect(file?.value(at: ["universe_domain"]) == "googleapis.com")
            for field in ["client_id", "auth_uri", "token_uri", "auth_provider_x509_cert_url", "client_x509_cert_url"] {
                #expect(file?.value(at: [field]) != nil, "\(field)")
            }
            guard case .string(let pem)? = file?.value(at: ["private_key"]) else {
                Issue.record("no private key")
                return
            }
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            #expect(try _RSA.Signing.PrivateKey(pemRepresentation: pem).keySizeInBits == 2048)

            let list = try await gateway.send(.get, Self.path(nil))
            #expect(list.status == .ok)
            let text = String(buffer: list.body)
            #expect(!text.contains("PRIVATE KEY") && !text.contains("private_key") && !text.contains("serviceAccount\":{"))
            #expect(
                try list.json().value(at: ["serviceAccounts"])
                    == .array([
                        .object([
                            "name": .string("projects/\(TestGateway.projectId)/serviceAccounts/\(keyId)"), "keyId": .string(keyId),
                            "clientEmail": .string(email), "displayName": "backend", "createTime": json.value(at: ["createTime"]) ?? .null,
                        ])
                    ]))

            #expect(try await gateway.send(.delete, "\(Self.path(nil))/\(keyId)").json() == .object([:]))
            try await gateway.send(.delete, "\(Self.path(nil))/\(keyId)").expectEnvelope(.notFound, "SERVICE_ACCOUNT_NOT_FOUND")
            #expect(try await gateway.send(.get, Self.path(nil)).json() == .object(["serviceAccounts": .array([])]))

            let audit = String(buffer: try await gateway.send(.get, "/v2/projects/\(TestGateway.projectId)/auditEvents").body)
            #expect(audit.contains("serviceAccount.create") && audit.contains("serviceAccount.delete"))
            #expect(!audit.contains("PRIVATE KEY"))
        }
    }

    @Test("a tenant's accounts are named under it, carry it in their email, and are apart from the project's")
    func tenantAccounts() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let signer = try await TestSigner.create(gateway, tenant: tenant)
            #expect(signer.email.hasSuffix("@\(tenant).\(TestGateway.projectId).iam.gserviceaccount.com"))
            let list = try await gateway.send(.get, Self.path(tenant)).json()
            guard case .array(let accounts)? = list.value(at: ["serviceAccounts"]) else {
                Issue.record("no list")
                return
            }
            #expect(accounts.count == 1)
            #expect(
                accounts.first?.value(at: ["name"])
                    == .string("projects/\(TestGateway.projectId)/tenants/\(tenant)/serviceAccounts/\(signer.keyId)"))
            #expect(try await gateway.send(.get, Self.path(nil)).json() == .object(["serviceAccounts": .array([])]))
            try await gateway.send(.delete, "\(Self.path(nil))/\(signer.keyId)").expectEnvelope(.notFound, "SERVICE_ACCOUNT_NOT_FOUND")
            for (method, json) in [(HTTPRequest.Method.post, #"{"displayName":"x"}"#), (.get, nil)] {
                try await gateway.send(method, Self.path("no-such-tenant"), json: json).expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            }
            try await gateway.send(.delete, "\(Self.path("no-such-tenant"))/\(signer.keyId)").expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            // A tenant's deletion takes its service accounts along.
            #expect(try await gateway.send(.delete, "\(gateway.tenants)/\(tenant)").status == .ok)
            try await gateway.send(.get, Self.path(tenant)).expectEnvelope(.notFound, "TENANT_NOT_FOUND")
        }
    }

    @Test("a tenant key manages its own tenant's accounts only: the project's and other tenants' are 403")
    func scope() async throws {
        try await TestGateway.run { gateway in
            let mine = try await gateway.createTenant()
            let other = try await gateway.createTenant()
            let tenantKey = try await gateway.key(.tenant(mine))
            let own = try await TestSigner.create(gateway, tenant: mine, key: tenantKey)
            #expect(try await gateway.send(.get, Self.path(mine), key: tenantKey).status == .ok)
            let projects = try await TestSigner.create(gateway)
            let others = try await TestSigner.create(gateway, tenant: other)
            for (method, path) in [
                (HTTPRequest.Method.post, Self.path(nil)), (.get, Self.path(nil)), (.delete, "\(Self.path(nil))/\(projects.keyId)"),
                (.post, Self.path(other)), (.get, Self.path(other)), (.delete, "\(Self.path(other))/\(others.keyId)"),
            ] {
                try await gateway.send(method, path, json: #"{"displayName":"x"}"#, key: tenantKey)
                    .expectEnvelope(.forbidden, "PERMISSION_DENIED")
            }
            #expect(try await gateway.send(.delete, "\(Self.path(mine))/\(own.keyId)", key: tenantKey).status == .ok)
            for tenant in [nil, other] {
                guard case .array(let left)? = try await gateway.send(.get, Self.path(tenant)).json().value(at: ["serviceAccounts"]) else {
                    Issue.record("no list")
                    continue
                }
                #expect(left.count == 1)
            }
            try await gateway.send(.post, Self.path(mine), json: "{}", key: .some(nil)).expectEnvelope(.unauthorized, "UNAUTHENTICATED")
        }
    }

    @Test("a customer's public key (PEM or JWK) is registered without a file; weak or malformed keys are 400")
    func registeredKeys() async throws {
        try await TestGateway.run { gateway in
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let pem = key.publicKey.pemRepresentation
            let response = try await gateway.send(
                .post, Self.path(nil),
                json: JSONValue.object([
                    "displayName": "own", "publicKey": .string(pem), "clientEmail": "backend@example.com",
                ]).serialized())
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let json = try response.json()
            #expect(json.value(at: ["serviceAccount"]) == nil)
            #expect(json.value(at: ["clientEmail"]) == "backend@example.com")

            // Without clientEmail, one is generated.
            let primitives = try key.publicKey.getKeyPrimitives()
            let jwk = JSONValue.object([
                "kty": "RSA", "n": .string(Base64URL.encode(Array(primitives.modulus))),
                "e": .string(Base64URL.encode(Array(primitives.publicExponent))),
            ])
            let fromJWK = try await gateway.send(
                .post, Self.path(nil), json: JSONValue.object(["publicKeyJwk": jwk]).serialized())
            #expect(fromJWK.status == .ok, "\(String(buffer: fromJWK.body))")
            #expect(
                {
                    guard case .string(let email)? = try? fromJWK.json().value(at: ["clientEmail"]) else { return false }
                    return email.hasPrefix("portcullis-")
                }())
            #expect(try fromJWK.json().value(at: ["serviceAccount"]) == nil)

            for (body, what) in [
                (JSONValue.object(["publicKey": .string(Self.weakKey)]), "a 1024-bit key"),
                (.object(["publicKey": "-----BEGIN PUBLIC KEY-----\nnonsense\n-----END PUBLIC KEY-----"]), "garbage"),
                (.object(["publicKeyJwk": .object(["kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"])]), "an EC JWK"),
                (.object(["publicKey": .string(pem), "publicKeyJwk": jwk]), "both forms"),
                (.object(["clientEmail": "me@example.com"]), "clientEmail without a key"),
                (.object(["publicKey": .string(pem), "clientEmail": "not an email"]), "a malformed email"),
                (.object(["displayName": .string(String(repeating: "n", count: 257))]), "a long display name"),
                (.object(["displayName": .integer(5), "publicKey": .array([])]), "a wrong type"),
            ] {
                let answer = try await gateway.send(.post, Self.path(nil), json: body.serialized())
                answer.expectEnvelope(.badRequest, "INVALID_ARGUMENT")
                #expect(answer.status == .badRequest, "\(what)")
            }
        }
    }
}
