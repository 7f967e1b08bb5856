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

/// `accounts:batchGet` under concurrent writes: keyset pages on the primary key give every
/// user exactly once.
@Suite("Admin user paging")
struct AdminUserPagingTests {
    @Test("2,500 users paged 1,000 at a time while another task creates users: each existing user exactly once, none twice")
    func pagesWhileUsersAreCreated() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            // Seeded in one statement. New users' uids fall between the seeded ones, on every page.
            let seededIds = (0..<2500).map { Self.uid($0 * 4) }
            _ = try await gateway.server.database.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO users (tenant_id, uid, email, created_at)
                    SELECT \(tenant), uid, uid || '@example.com', now() FROM unnest(\(seededIds)::text[]) AS uid
                    """, logger: TestDatabase.logger)
            }
            let seeded = Set(seededIds)

            let creating = Task {
                var created: [String] = []
                for index in 0..<150 {
                    let uid = Self.uid(index * 66 + 1)
                    try await gateway.createUser(#"{"localId":"\#(uid)"}"#, tenant: tenant)
                    created.append(uid)
                }
                return created
            }
            var seen: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let query = "maxResults=1000" + (token.map { "&nextPageToken=\($0)" } ?? "")
                let response = try await gateway.batchGet(tenant: tenant, query)
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let page = try response.json()
                let uids = page.list(at: ["users"]).compactMap { $0.string(at: ["localId"]) }
                #expect(uids == uids.sorted(), "a page is in uid order")
                if let last = seen.last, let first = uids.first { #expect(last < first, "pages follow each other") }
                seen += uids
                token = page.string(at: ["nextPageToken"])
                pages += 1
                // Let the writer in between pages.
                try await Task.sleep(for: .milliseconds(20))
            } while token != nil && pages < 10
            let created = try await creating.value

            #expect(Set(seen).count == seen.count, "no user twice")
            #expect(seeded.isSubset(of: Set(seen)), "every seeded user: \(seeded.subtracting(seen).count) missing")
            #expect(Set(seen).isSubset(of: seeded.union(created)))
            #expect(pages >= 3)
        }
    }

    /// `u00042`: uids that sort as their numbers do.
    static func uid(_ number: Int) -> String { "u" + String(format: "%05d", number) }
}
