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

/// `accounts:batchGet` pages and `accounts:query`.
extension AdminUserTests {
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
}
