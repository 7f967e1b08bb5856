import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

/// The admin user API (`/v1/projects/{p}[/tenants/{t}]/accounts…`) through the real router
/// and PostgreSQL: every operation, its answers' shapes and its error codes.
@Suite("Admin user management")
struct AdminUserTests {
    /// Runs `body` for project users and for a fresh tenant, with password sign-in on.
    static func forEachScope(_ body: @Sendable (TestGateway, String?) async throws -> Void) async throws {
        try await TestGateway.run { gateway in
            try await gateway.send(
                .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup",
                json: #"{"allowPasswordSignup":true}"#)
            try await body(gateway, nil)
            let tenant = try await gateway.createTenant(#"{"displayName":"admin-users","allowPasswordSignup":true}"#)
            try await body(gateway, tenant)
        }
    }

    @Test(
        "create answers DUPLICATE_LOCAL_ID, EMAIL_EXISTS, refuses phone numbers; lookup by uid, email, phone and identity finds each user once"
    )
    func createAndLookup() async throws {
        try await Self.forEachScope { gateway, tenant in
            let ada = try await gateway.admin(
                "", tenant: tenant,
                #"{"localId":"ada","email":"Ada@Example.com","password":"secret12","displayName":"Ada","photoUrl":"https://p/a.png","emailVerified":true}"#
            )
            #expect(ada.status == .ok, "\(String(buffer: ada.body))")
            #expect(try ada.json().string(at: ["localId"]) == "ada")
            #expect(try ada.json().string(at: ["kind"]) == "identitytoolkit#SignupNewUserResponse")

            try await gateway.admin("", tenant: tenant, #"{"localId":"ada"}"#).expectEnvelope(.badRequest, "DUPLICATE_LOCAL_ID")
            try await gateway.admin("", tenant: tenant, #"{"email":"ADA@example.com"}"#).expectEnvelope(.badRequest, "EMAIL_EXISTS")
            let phone = try await gateway.admin("", tenant: tenant, #"{"localId":"tel","phoneNumber":"+15555550100"}"#)
            phone.expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED : phone numbers are not supported")
            try await gateway.admin("", tenant: tenant, #"{"email":"weak@example.com","password":"12345"}"#)
                .expectEnvelope(.badRequest, "WEAK_PASSWORD")
            try await gateway.admin("", tenant: tenant, #"{"localId":"\#(String(repeating: "x", count: 129))"}"#)
                .expectEnvelope(.badRequest, "INVALID_LOCAL_ID")
            #expect(try await gateway.adminUser("tel", tenant: tenant) == nil, "a refused create writes nothing")

            // A second user known only by a federated identity an admin linked.
            let grace = try await gateway.createUser(#"{"displayName":"Grace"}"#, tenant: tenant)
            let linked = try await gateway.admin(
                ":update", tenant: tenant,
                #"{"localId":"\#(grace)","linkProviderUserInfo":{"providerId":"google.com","rawId":"g-123","email":"grace@gmail.com"}}"#)
            #expect(linked.status == .ok, "\(String(buffer: linked.body))")

            let found = try await gateway.admin(
                ":lookup", tenant: tenant,
                #"""
                {"localId":["ada","nobody"],"email":["ADA@example.com","none@example.com"],"phoneNumber":["+15555550100"],
                 "federatedUserId":[{"providerId":"google.com","rawId":"g-123"},{"providerId":"google.com","rawId":"other"}]}
                """#)
            #expect(found.status == .ok)
            let users = try found.json().list(at: ["users"])
            #expect(users.compactMap { $0.string(at: ["localId"]) }.sorted() == ["ada", grace].sorted(), "each user once")
            let record = try #require(users.first { $0.string(at: ["localId"]) == "ada" })
            #expect(record.string(at: ["email"]) == "ada@example.com")
            #expect(record.value(at: ["emailVerified"]) == .bool(true))
            #expect(record.value(at: ["disabled"]) == .bool(false))
            #expect(record.string(at: ["displayName"]) == "Ada")
            #expect(record.string(at: ["photoUrl"]) == "https://p/a.png")
            #expect(record.string(at: ["tenantId"]) == tenant)
            #expect(record.string(at: ["validSince"]).flatMap { Int64($0) } != nil)
            #expect(record.string(at: ["createdAt"]).flatMap { Int64($0) } != nil)
            #expect(record.list(at: ["providerUserInfo"]).compactMap { $0.string(at: ["providerId"]) } == ["password"])
            // Google's placeholder ("REDACTED"; the Admin SDKs read it as no hash), never the hash.
            #expect(record.string(at: ["passwordHash"]) == "UkVEQUNURUQ=" && record.value(at: ["salt"]) == nil)
            #expect(!found.body.readableBytesView.contains(Array("scrypt".utf8)))
            let graceRecord = try #require(users.first { $0.string(at: ["localId"]) == grace })
            let identity = try #require(graceRecord.list(at: ["providerUserInfo"]).first)
            #expect(identity.string(at: ["providerId"]) == "google.com" && identity.string(at: ["rawId"]) == "g-123")

            // The Admin SDKs' get_user_by_email and get_user_by_phone_number shapes; nothing found: no `users`.
            let byEmail = try await gateway.admin(":lookup", tenant: tenant, #"{"email":["ada@EXAMPLE.com"]}"#).json()
            #expect(byEmail.list(at: ["users"]).compactMap { $0.string(at: ["localId"]) } == ["ada"])
            let byPhone = try await gateway.admin(":lookup", tenant: tenant, #"{"phoneNumber":["+15555550100"]}"#).json()
            #expect(byPhone.value(at: ["users"]) == nil)
            let single = try await gateway.admin(":lookup", tenant: tenant, #"{"localId":"ada"}"#).json()
            #expect(single.list(at: ["users"]).count == 1)
            let tooMany = (0...1000).map { "\"u\($0)\"" }.joined(separator: ",")
            try await gateway.admin(":lookup", tenant: tenant, #"{"localId":[\#(tooMany)]}"#).expectEnvelope(
                .badRequest, "INVALID_ARGUMENT")
        }
    }

    @Test("update changes exactly the given fields: disable, verify, claims, validSince, profile, deleteAttribute; each error code")
    func updateFields() async throws {
        try await Self.forEachScope { gateway, tenant in
            let uid = try await gateway.createUser(
                #"{"email":"bob@example.com","password":"secret12","displayName":"Bob","photoUrl":"https://p/b.png"}"#, tenant: tenant)
            let session = try await gateway.signIn("bob@example.com", "secret12", tenant: tenant)
            func update(_ fields: String) async throws -> TestResponse {
                try await gateway.admin(":update", tenant: tenant, #"{"localId":"\#(uid)",\#(fields)}"#)
            }
            func stored() async throws -> JSONValue { try #require(try await gateway.adminUser(uid, tenant: tenant)) }

            // Manual verification and claims; nothing else moves.
            let verified = try await update(#""emailVerified":true,"customAttributes":"{\"role\":\"admin\",\"level\":3}""#)
            #expect(verified.status == .ok, "\(String(buffer: verified.body))")
            #expect(try verified.json().string(at: ["localId"]) == uid)
            #expect(try verified.json().string(at: ["kind"]) == "identitytoolkit#SetAccountInfoResponse")
            var user = try await stored()
            #expect(user.value(at: ["emailVerified"]) == .bool(true))
            let claims = user.string(at: ["customAttributes"]).flatMap { try? JSONValue.parse(Array($0.utf8)) }
            #expect(claims == .object(["role": "admin", "level": 3]))
            #expect(user.string(at: ["displayName"]) == "Bob" && user.string(at: ["email"]) == "bob@example.com")
            // The claims reach the next ID token.
            let claimed = try await gateway.signIn("bob@example.com", "secret12", tenant: tenant)
            #expect(claimed.claims.value(at: ["role"]) == "admin")
            #expect(try await gateway.refresh(session.refreshToken).status == .ok, "claims revoke nothing")

            // Claim errors.
            try await update(#""customAttributes":"{\"sub\":\"x\"}""#).expectEnvelope(.badRequest, "FORBIDDEN_CLAIM : sub")
            try await update(#""customAttributes":"[1]""#).expectEnvelope(.badRequest, "INVALID_CLAIMS")
            try await update(#""customAttributes":"{nope""#).expectEnvelope(.badRequest, "INVALID_CLAIMS")
            let big = String(repeating: "x", count: 1000)
            try await update(#""customAttributes":"{\"big\":\"\#(big)\"}""#).expectEnvelope(.badRequest, "CLAIMS_TOO_LARGE")
            // An empty object clears them (the SDKs' DELETE_ATTRIBUTE).
            #expect(try await update(#""customAttributes":"{}""#).status == .ok)
            #expect(try await stored().value(at: ["customAttributes"]) == nil)

            // Profile and deleteAttribute.
            #expect(try await update(#""displayName":"Robert","photoUrl":"https://p/r.png""#).status == .ok)
            user = try await stored()
            #expect(user.string(at: ["displayName"]) == "Robert" && user.string(at: ["photoUrl"]) == "https://p/r.png")
            #expect(try await update(#""deleteAttribute":["DISPLAY_NAME","PHOTO_URL"]"#).status == .ok)
            user = try await stored()
            #expect(user.value(at: ["displayName"]) == nil && user.value(at: ["photoUrl"]) == nil)
            #expect(user.value(at: ["emailVerified"]) == .bool(true), "other fields stand")
            try await update(#""deleteAttribute":["SHOE_SIZE"]"#).expectEnvelope(.badRequest, "INVALID_ARGUMENT")

            // Disabling revokes (the watermark moves to now) and blocks sign-in; enabling restores sign-in.
            #expect(try await stored().string(at: ["validSince"]) == "0")
            #expect(try await update(#""disableUser":true"#).status == .ok)
            user = try await stored()
            #expect(user.value(at: ["disabled"]) == .bool(true))
            #expect(user.string(at: ["validSince"]).flatMap { Int64($0) }.map { $0 > 1_700_000_000 } == true)
            #expect(try await gateway.refresh(session.refreshToken).status == .badRequest)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "bob@example.com", "password": "secret12"], tenant: tenant
            ).expectEnvelope(.badRequest, "USER_DISABLED")
            #expect(try await update(#""disableUser":false"#).status == .ok)
            let fresh = try await gateway.signIn("bob@example.com", "secret12", tenant: tenant)

            // validSince as the SDKs send it (a number) and as a numeric string, taken as given.
            #expect(try await update(#""validSince":1700000000"#).status == .ok)
            #expect(try await stored().string(at: ["validSince"]) == "1700000000")
            #expect(try await update(#""validSince":"1700000001""#).status == .ok)
            #expect(try await stored().string(at: ["validSince"]) == "1700000001")
            #expect(try await gateway.refresh(fresh.refreshToken).status == .ok, "a past watermark revokes nothing new")
            try await update(#""validSince":-1"#).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await update(#""validSince":99999999999999"#).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            let now = Int64(Date().timeIntervalSince1970)
            #expect(try await update(#""validSince":\#(now + 1)"#).status == .ok)
            #expect(try await gateway.refresh(fresh.refreshToken).errorMessage == "TOKEN_EXPIRED", "revoked")

            // Phone numbers, unknown and missing users.
            try await update(#""phoneNumber":"+15555550100""#)
                .expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED : phone numbers are not supported")
            try await gateway.admin(":update", tenant: tenant, #"{"localId":"ghost","disableUser":true}"#)
                .expectEnvelope(.badRequest, "USER_NOT_FOUND")
            try await gateway.admin(":update", tenant: tenant, #"{"disableUser":true}"#).expectEnvelope(.badRequest, "MISSING_LOCAL_ID")
        }
    }
}
