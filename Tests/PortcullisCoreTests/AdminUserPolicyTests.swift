import PortcullisCore
import Testing

/// The pure rules of admin user management: `accounts:query`'s reading, `deleteAttribute`,
/// `linkProviderUserInfo`, `validSince` bounds.
@Suite("Admin user policy")
struct AdminUserPolicyTests {
    @Test("query: defaults, the first field of the first expression, sort fields and orders")
    func queryReading() throws {
        let defaults = try UserQuery(email: nil, phoneNumber: nil, userId: nil, sortBy: nil, order: nil, offset: nil, limit: nil)
        #expect(defaults == UserQuery(filter: .all, sortBy: .userId, descending: false, offset: 0, limit: 500))
        let unspecified = try UserQuery(
            email: nil, phoneNumber: nil, userId: nil, sortBy: "SORT_BY_FIELD_UNSPECIFIED", order: "ORDER_UNSPECIFIED", offset: 0,
            limit: 500)
        #expect(unspecified == defaults)
        // Email before phone before uid, as Identity Toolkit documents.
        #expect(
            try UserQuery(email: "A@B.co", phoneNumber: "+1", userId: "u", sortBy: nil, order: nil, offset: nil, limit: nil).filter
                == .email("a@b.co"))
        #expect(
            try UserQuery(email: nil, phoneNumber: "+1", userId: "u", sortBy: nil, order: nil, offset: nil, limit: nil).filter == .nobody)
        #expect(
            try UserQuery(email: nil, phoneNumber: nil, userId: "U1", sortBy: nil, order: nil, offset: nil, limit: nil).filter == .uid("U1")
        )
        let sorted = try UserQuery(email: nil, phoneNumber: nil, userId: nil, sortBy: "USER_EMAIL", order: "DESC", offset: 7, limit: 1)
        #expect(sorted == UserQuery(filter: .all, sortBy: .email, descending: true, offset: 7, limit: 1))
    }

    @Test(
        "query: INVALID_ARGUMENT for limits outside 1–500, negative offsets, unknown sort fields and orders",
        arguments: [
            (nil, nil, nil, 501), (nil, nil, nil, 0), (nil, nil, -1, nil), ("EMAIL", nil, nil, nil), (nil, "asc", nil, nil),
        ] as [(String?, String?, Int64?, Int64?)])
    func queryRefusals(sortBy: String?, order: String?, offset: Int64?, limit: Int64?) {
        let error = #expect(throws: AuthError.self) {
            try UserQuery(email: nil, phoneNumber: nil, userId: nil, sortBy: sortBy, order: order, offset: offset, limit: limit)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test("deleteAttribute: known names, the unspecified one skipped, anything else INVALID_ARGUMENT")
    func attributes() throws {
        #expect(
            try AdminUserPolicy.attributes(["DISPLAY_NAME", "USER_ATTRIBUTE_NAME_UNSPECIFIED", "PASSWORD"]) == [.displayName, .password])
        #expect(try AdminUserPolicy.attributes([]) == [])
        #expect(throws: AuthError(.invalidArgument, detail: "deleteAttribute: unknown attribute display_name")) {
            try AdminUserPolicy.attributes(["display_name"])
        }
    }

    @Test("linkProviderUserInfo: federated providers only, both ids required, profile validated")
    func links() throws {
        let link = try AdminUserPolicy.link(
            providerId: "oidc.corp", rawId: "42", email: "Who@Corp.example", displayName: "Who", photoURL: nil)
        #expect(link == ProviderLink(providerId: "oidc.corp", federatedId: "42", email: "who@corp.example", displayName: "Who"))
        for provider in ["password", "phone", "anonymous", "custom"] {
            #expect(throws: AuthError.self) {
                try AdminUserPolicy.link(providerId: provider, rawId: "1", email: nil, displayName: nil, photoURL: nil)
            }
        }
        #expect(throws: AuthError(.invalidArgument, detail: "linkProviderUserInfo.providerId is required")) {
            try AdminUserPolicy.link(providerId: "", rawId: "1", email: nil, displayName: nil, photoURL: nil)
        }
        #expect(throws: AuthError(.invalidArgument, detail: "linkProviderUserInfo.rawId must be 1 to 512 bytes")) {
            try AdminUserPolicy.link(providerId: "google.com", rawId: nil, email: nil, displayName: nil, photoURL: nil)
        }
        #expect(throws: AuthError(.invalidEmail)) {
            try AdminUserPolicy.link(providerId: "google.com", rawId: "1", email: "nope", displayName: nil, photoURL: nil)
        }
    }

    @Test("validSince: 0 through year 9999, in microseconds; anything else INVALID_ARGUMENT, never an overflow")
    func validSince() throws {
        #expect(try AdminUserPolicy.validSince(0) == Timestamp(microseconds: 0))
        #expect(try AdminUserPolicy.validSince(1_700_000_000).microseconds == 1_700_000_000_000_000)
        #expect(try AdminUserPolicy.validSince(AdminUserPolicy.latestValidSince).seconds == AdminUserPolicy.latestValidSince)
        for seconds in [-1, AdminUserPolicy.latestValidSince + 1, Int64.max, Int64.min] {
            #expect(throws: AuthError.self) { try AdminUserPolicy.validSince(seconds) }
        }
    }

    @Test("customAttributes: malformed JSON is INVALID_CLAIMS like any non-object")
    func claims() {
        for text in ["{nope", "[1]", "\"x\"", "3"] {
            #expect(throws: AuthError(.invalidClaims)) { try CustomClaims.parse(text) }
        }
    }
}
