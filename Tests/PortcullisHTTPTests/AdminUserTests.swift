import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

extension TestGateway {
    /// `/v1/projects/{p}[/tenants/{t}]/accounts`: the admin user API's base path.
    static func accounts(tenant: String?) -> String {
        "/v1/projects/\(projectId)\(tenant.map { "/tenants/\($0)" } ?? "")/accounts"
    }

    /// `POST …/accounts<operation>` with the project key unless `key` says otherwise.
    @discardableResult
    func admin(_ operation: String, tenant: String?, _ json: String, key: String?? = .none) async throws -> TestResponse {
        try await send(.post, Self.accounts(tenant: tenant) + operation, json: json, key: key)
    }

    /// `GET …/accounts:batchGet?<query>`.
    func batchGet(tenant: String?, _ query: String, key: String?? = .none) async throws -> TestResponse {
        try await send(.get, Self.accounts(tenant: tenant) + ":batchGet" + (query.isEmpty ? "" : "?\(query)"), key: key)
    }

    /// The one user `accounts:lookup` finds by uid, or `nil`.
    func adminUser(_ uid: String, tenant: String?) async throws -> JSONValue? {
        let response = try await admin(":lookup", tenant: tenant, #"{"localId":["\#(uid)"]}"#)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.json().list(at: ["users"]).first
    }

    /// Creates a user through the admin API and returns its uid.
    @discardableResult
    func createUser(_ json: String, tenant: String?) async throws -> String {
        let response = try await admin("", tenant: tenant, json)
        guard response.status == .ok, case .string(let uid)? = try response.json().value(at: ["localId"]) else {
            throw TestSetupError("create failed: \(String(buffer: response.body))")
        }
        return uid
    }
}

extension JSONValue {
    /// The array at `path`, empty when absent.
    func list(at path: [String]) -> [JSONValue] {
        if case .array(let items)? = value(at: path) { return items }
        return []
    }

    /// The string at `path`.
    func string(at path: [String]) -> String? {
        if case .string(let text)? = value(at: path) { return text }
        return nil
    }
}

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
            #expect(record.value(at: ["passwordHash"]) == nil && record.value(at: ["salt"]) == nil)
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

    @Test("update sets the password with the tenant's policy and email (EMAIL_EXISTS), both revoking sessions; unlinks and links providers")
    func updateCredentialsAndProviders() async throws {
        try await Self.forEachScope { gateway, tenant in
            let uid = try await gateway.createUser(#"{"email":"carol@example.com","password":"secret12"}"#, tenant: tenant)
            _ = try await gateway.createUser(#"{"email":"taken@example.com"}"#, tenant: tenant)
            func update(_ fields: String) async throws -> TestResponse {
                try await gateway.admin(":update", tenant: tenant, #"{"localId":"\#(uid)",\#(fields)}"#)
            }
            let session = try await gateway.signIn("carol@example.com", "secret12", tenant: tenant)

            try await update(#""password":"12345""#).expectEnvelope(.badRequest, "WEAK_PASSWORD")
            #expect(try await gateway.refresh(session.refreshToken).status == .ok, "a refused change revokes nothing")
            #expect(try await update(#""password":"new secret 1""#).status == .ok)
            #expect(try await gateway.refresh(session.refreshToken).errorMessage == "TOKEN_EXPIRED")
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "carol@example.com", "password": "secret12"], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_PASSWORD")
            let second = try await gateway.signIn("carol@example.com", "new secret 1", tenant: tenant)

            try await update(#""email":"TAKEN@example.com""#).expectEnvelope(.badRequest, "EMAIL_EXISTS")
            try await update(#""email":"not-an-email""#).expectEnvelope(.badRequest, "INVALID_EMAIL")
            #expect(try await update(#""emailVerified":true"#).status == .ok)
            #expect(try await update(#""email":"Carol2@example.com""#).status == .ok)
            var user = try #require(try await gateway.adminUser(uid, tenant: tenant))
            #expect(user.string(at: ["email"]) == "carol2@example.com")
            #expect(user.value(at: ["emailVerified"]) == .bool(false), "a new email is unverified")
            #expect(user.list(at: ["providerUserInfo"]).compactMap { $0.string(at: ["federatedId"]) } == ["carol2@example.com"])
            #expect(try await gateway.refresh(second.refreshToken).errorMessage == "TOKEN_EXPIRED")
            _ = try await gateway.signIn("carol2@example.com", "new secret 1", tenant: tenant)

            // Linking: FEDERATED_USER_ID_ALREADY_LINKED when another user holds the identity.
            let link = #""linkProviderUserInfo":{"providerId":"github.com","rawId":"gh-7","displayName":"Carol GH"}"#
            #expect(try await update(link).status == .ok)
            #expect(try await update(link).status == .ok, "linking it again to its own user is no error")
            let other = try await gateway.createUser("{}", tenant: tenant)
            try await gateway.admin(":update", tenant: tenant, #"{"localId":"\#(other)",\#(link)}"#)
                .expectEnvelope(.badRequest, "FEDERATED_USER_ID_ALREADY_LINKED")
            try await update(#""linkProviderUserInfo":{"providerId":"password","rawId":"x"}"#)
                .expectEnvelope(.badRequest, "INVALID_PROVIDER_ID")
            try await update(#""linkProviderUserInfo":{"providerId":"google.com"}"#).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            user = try #require(try await gateway.adminUser(uid, tenant: tenant))
            #expect(
                user.list(at: ["providerUserInfo"]).compactMap { $0.string(at: ["providerId"]) }.sorted() == ["github.com", "password"])

            // An admin may remove any provider, the last one included; the SDKs' phone removal is harmless.
            #expect(try await update(#""deleteProvider":["password","phone"]"#).status == .ok)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "carol2@example.com", "password": "new secret 1"], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_PASSWORD")
            #expect(try await update(#""deleteProvider":["github.com"]"#).status == .ok)
            user = try #require(try await gateway.adminUser(uid, tenant: tenant))
            #expect(user.list(at: ["providerUserInfo"]).isEmpty)
            #expect(user.string(at: ["email"]) == "carol2@example.com", "unlinking keeps the email")
            // The identity is free again: another user may have it.
            #expect(try await gateway.admin(":update", tenant: tenant, #"{"localId":"\#(other)",\#(link)}"#).status == .ok)
            let lookup = try await gateway.admin(
                ":lookup", tenant: tenant, #"{"federatedUserId":[{"providerId":"github.com","rawId":"gh-7"}]}"#
            ).json()
            #expect(lookup.list(at: ["users"]).compactMap { $0.string(at: ["localId"]) } == [other])
        }
    }

    @Test("delete and batchDelete: USER_NOT_FOUND, force, per-id NOT_DISABLED errors, LOCAL_ID_LIST_EXCEEDS_LIMIT")
    func deletion() async throws {
        try await Self.forEachScope { gateway, tenant in
            let gone = try await gateway.createUser(#"{"email":"gone@example.com","password":"secret12"}"#, tenant: tenant)
            let session = try await gateway.signIn("gone@example.com", "secret12", tenant: tenant)
            let deleted = try await gateway.admin(":delete", tenant: tenant, #"{"localId":"\#(gone)"}"#)
            #expect(deleted.status == .ok)
            #expect(try deleted.json().string(at: ["kind"]) == "identitytoolkit#DeleteAccountResponse")
            #expect(try await gateway.refresh(session.refreshToken).status == .badRequest, "its sessions are gone")
            try await gateway.admin(":delete", tenant: tenant, #"{"localId":"\#(gone)"}"#).expectEnvelope(.badRequest, "USER_NOT_FOUND")
            try await gateway.admin(":delete", tenant: tenant, "{}").expectEnvelope(.badRequest, "MISSING_LOCAL_ID")

            let live = try await gateway.createUser(#"{"localId":"live","email":"live@example.com","password":"secret12"}"#, tenant: tenant)
            let liveSession = try await gateway.signIn("live@example.com", "secret12", tenant: tenant)
            let off = try await gateway.createUser(#"{"localId":"off","disabled":true}"#, tenant: tenant)
            let other = try await gateway.createUser(#"{"localId":"other"}"#, tenant: tenant)
            let refused = try await gateway.admin(
                ":batchDelete", tenant: tenant, #"{"localIds":["\#(live)","\#(off)","ghost","\#(live)","\#(other)"]}"#)
            #expect(refused.status == .ok, "\(String(buffer: refused.body))")
            let errors = try refused.json().list(at: ["errors"])
            #expect(errors.count == 2)
            #expect(errors.first?.value(at: ["index"]) == 0 && errors.first?.string(at: ["localId"]) == live)
            #expect(errors.last?.value(at: ["index"]) == 4 && errors.last?.string(at: ["localId"]) == other)
            #expect(errors.allSatisfy { $0.string(at: ["message"])?.hasPrefix("NOT_DISABLED") == true })
            #expect(try await gateway.adminUser(off, tenant: tenant) == nil)
            #expect(try await gateway.adminUser(live, tenant: tenant) != nil)
            #expect(try await gateway.adminUser(other, tenant: tenant) != nil)
            #expect(try await gateway.refresh(liveSession.refreshToken).status == .ok, "a kept user keeps its sessions")

            // What firebase-admin's delete_users sends.
            let forced = try await gateway.admin(":batchDelete", tenant: tenant, #"{"localIds":["\#(live)","\#(other)"],"force":true}"#)
            #expect(forced.status == .ok)
            #expect(try forced.json().value(at: ["errors"]) == nil)
            #expect(try await gateway.adminUser(live, tenant: tenant) == nil)
            #expect(try await gateway.adminUser(other, tenant: tenant) == nil)

            let ids = (0...1000).map { "\"u\($0)\"" }.joined(separator: ",")
            try await gateway.admin(":batchDelete", tenant: tenant, #"{"localIds":[\#(ids)],"force":true}"#)
                .expectEnvelope(.badRequest, "LOCAL_ID_LIST_EXCEEDS_LIMIT")
            try await gateway.admin(":batchDelete", tenant: tenant, #"{"localIds":[]}"#)
                .expectEnvelope(.badRequest, "LOCAL_ID_LIST_EXCEEDS_LIMIT")
        }
    }

    @Test("batchGet pages in uid order with opaque tokens; maxResults 1–1000 (default 20); a forged token is INVALID_PAGE_SELECTION")
    func batchGet() async throws {
        try await Self.forEachScope { gateway, tenant in
            let uids = (0..<25).map { String(format: "user-%02d", $0) }
            for uid in uids.shuffled() { try await gateway.createUser(#"{"localId":"\#(uid)"}"#, tenant: tenant) }

            let first = try await gateway.batchGet(tenant: tenant, "").json()
            #expect(first.list(at: ["users"]).compactMap { $0.string(at: ["localId"]) } == Array(uids.prefix(20)))
            #expect(first.string(at: ["kind"]) == "identitytoolkit#DownloadAccountResponse")
            var seen: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let response = try await gateway.batchGet(tenant: tenant, "maxResults=10" + (token.map { "&nextPageToken=\($0)" } ?? ""))
                #expect(response.status == .ok)
                let page = try response.json()
                seen += page.list(at: ["users"]).compactMap { $0.string(at: ["localId"]) }
                token = page.string(at: ["nextPageToken"])
                pages += 1
            } while token != nil && pages < 10
            #expect(seen == uids, "each user once, in uid order")
            #expect(pages == 3, "no empty last page")

            for bad in ["maxResults=0", "maxResults=1001", "maxResults=ten"] {
                try await gateway.batchGet(tenant: tenant, bad).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            }
            try await gateway.batchGet(tenant: tenant, "nextPageToken=%21%21").expectEnvelope(.badRequest, "INVALID_PAGE_SELECTION")
        }
    }

    @Test("query filters by email, userId or phone (nobody), sorts by each field both ways, slices, and counts")
    func query() async throws {
        try await Self.forEachScope { gateway, tenant in
            let people = [("q1", "Zoe", "b@example.com"), ("q2", "Adam", "c@example.com"), ("q3", "Mia", "a@example.com")]
            for (uid, name, email) in people {
                try await gateway.createUser(#"{"localId":"\#(uid)","displayName":"\#(name)","email":"\#(email)"}"#, tenant: tenant)
            }
            try await gateway.createUser(#"{"localId":"q0"}"#, tenant: tenant)
            func query(_ json: String) async throws -> (count: String?, uids: [String]?) {
                let response = try await gateway.admin(":query", tenant: tenant, json)
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let body = try response.json()
                let uids = body.value(at: ["userInfo"]).map { _ in body.list(at: ["userInfo"]).compactMap { $0.string(at: ["localId"]) } }
                return (body.string(at: ["recordsCount"]), uids)
            }
            #expect(try await query("{}") == ("4", ["q0", "q1", "q2", "q3"]))
            #expect(try await query(#"{"returnUserInfo":false}"#) == ("4", nil))
            #expect(try await query(#"{"expression":[{"email":"B@EXAMPLE.com"}]}"#) == ("1", ["q1"]))
            #expect(try await query(#"{"expression":[{"userId":"q3"}]}"#) == ("1", ["q3"]))
            #expect(try await query(#"{"expression":[{"phoneNumber":"+15555550100"}]}"#) == ("0", []))
            #expect(try await query(#"{"expression":[{"email":"c@example.com","userId":"q1"}],"returnUserInfo":false}"#) == ("1", nil))
            #expect(try await query(#"{"sortBy":"NAME"}"#).uids == ["q2", "q3", "q1", "q0"], "no name sorts last")
            #expect(try await query(#"{"sortBy":"NAME","order":"DESC"}"#).uids == ["q1", "q3", "q2", "q0"])
            #expect(try await query(#"{"sortBy":"USER_EMAIL"}"#).uids == ["q3", "q1", "q2", "q0"])
            #expect(try await query(#"{"sortBy":"USER_ID","order":"DESC","offset":"1","limit":"2"}"#) == ("2", ["q2", "q1"]))
            #expect(try await query(#"{"sortBy":"CREATED_AT","limit":1}"#).uids?.count == 1)
            #expect(try await query(#"{"sortBy":"LAST_LOGIN_AT"}"#).uids?.count == 4)
            for bad in [#"{"limit":501}"#, #"{"limit":0}"#, #"{"offset":-1}"#, #"{"sortBy":"SHOE_SIZE"}"#, #"{"order":"SIDEWAYS"}"#] {
                try await gateway.admin(":query", tenant: tenant, bad).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            }
        }
    }

    @Test("every admin change writes an audit row with the key, tenant and uid, and never a password or its hash")
    func audit() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            let key = try await gateway.key(.tenant(tenant))
            // `pcak_<key id>_<secret>`: the audit log names the key by its id.
            let keyId = String(key.dropFirst("pcak_".count).prefix(16))
            func call(_ operation: String, _ json: String) async throws {
                let response = try await gateway.admin(operation, tenant: tenant, json, key: key)
                #expect(response.status == .ok, "\(String(buffer: response.body))")
            }
            try await call("", #"{"localId":"audited","email":"audit@example.com","password":"first secret"}"#)
            try await call(":update", #"{"localId":"audited","password":"second secret","customAttributes":"{\"tier\":\"gold\"}"}"#)
            try await call("", #"{"localId":"bulk1","disabled":true}"#)
            try await call("", #"{"localId":"bulk2"}"#)
            let hash = try await gateway.server.database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT password_hash FROM users WHERE uid = 'audited'", logger: TestDatabase.logger)
                var hash = ""
                for try await value in rows.decode(String.self) { hash = value }
                return hash
            }
            #expect(hash.count > 20)
            try await call(":delete", #"{"localId":"audited"}"#)
            try await call(":batchDelete", #"{"localIds":["bulk1","bulk2"]}"#)

            let response = try await gateway.send(.get, "/v2/projects/\(TestGateway.projectId)/tenants/\(tenant)/auditEvents", key: key)
            let events = try response.json().list(at: ["auditEvents"]).filter { $0.string(at: ["action"])?.hasPrefix("user.") == true }
            let summary = events.reversed().compactMap { event -> String? in
                guard let action = event.string(at: ["action"]), let target = event.string(at: ["target"]) else { return nil }
                return "\(action) \(target)"
            }
            #expect(
                summary == [
                    "user.create users/audited", "user.update users/audited", "user.create users/bulk1", "user.create users/bulk2",
                    "user.delete users/audited", "user.delete users/bulk1",
                ], "bulk2 is not disabled: kept")
            #expect(events.allSatisfy { $0.string(at: ["actor"]) == "adminKey:\(keyId)" })
            let update = try #require(events.first { $0.string(at: ["action"]) == "user.update" })
            #expect(update.list(at: ["after", "updatedFields"]) == ["customAttributes", "password"])
            #expect(update.value(at: ["after", "customAttributes", "tier"]) == "gold")
            #expect(
                update.value(at: ["before", "validSince"]) != update.value(at: ["after", "validSince"]), "the password change revoked")

            let stored = try await gateway.server.database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT coalesce(before::text, '') || coalesce(after::text, '') FROM audit_log", logger: TestDatabase.logger)
                var text = ""
                for try await row in rows.decode(String.self) { text += row }
                return text
            }
            #expect(stored.contains("audit@example.com"))
            for secret in ["first secret", "second secret", hash, "scrypt", "passwordHash"] {
                #expect(!stored.contains(secret), "the audit log holds \(secret)")
            }
        }
    }
}
