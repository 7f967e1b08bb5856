/// `accounts:query` (Identity Toolkit's `QueryUserInfo`), validated: which users, in which
/// order, which slice.
///
/// Identity Toolkit evaluates only the first `expression`, and within it only the first of
/// `email`, `phoneNumber`, `userId` that is set; so does this. Sorting always ends on the
/// uid, so equal keys (two users without a name) come in one stable order and `offset`
/// pages never repeat or skip a user of an unchanged tenant.
public struct UserQuery: Sendable, Equatable {
    /// The users a query selects.
    public enum Filter: Sendable, Equatable {
        /// Every user of the tenant.
        case all
        /// The user with this uid (exact).
        case uid(String)
        /// The user with this email (case-insensitive; already in lower case).
        case email(String)
        /// Nobody: Portcullis has no phone numbers, so a phone filter matches no user.
        case nobody
    }

    /// `sortBy`: the field users are ordered by.
    public enum SortField: String, Sendable, CaseIterable {
        case userId = "USER_ID"
        case name = "NAME"
        case createdAt = "CREATED_AT"
        case lastLoginAt = "LAST_LOGIN_AT"
        case email = "USER_EMAIL"
    }

    /// The largest `limit` (Identity Toolkit's), also the default.
    public static let maximumLimit = 500

    /// Which users.
    public var filter: Filter
    /// Ordered by.
    public var sortBy: SortField
    /// `order: DESC`.
    public var descending: Bool
    /// Users skipped from the start of the ordered matches.
    public var offset: Int
    /// At most this many users are returned (1–500).
    public var limit: Int

    /// A query.
    public init(filter: Filter = .all, sortBy: SortField = .userId, descending: Bool = false, offset: Int = 0, limit: Int = 500) {
        self.filter = filter
        self.sortBy = sortBy
        self.descending = descending
        self.offset = offset
        self.limit = limit
    }

    /// Validates a request's fields. `INVALID_ARGUMENT` for an unknown `sortBy` or `order`, a
    /// negative `offset` or a `limit` outside 1–500; `*_UNSPECIFIED` and
    /// absent fields take the defaults (`USER_ID`, `ASC`, 0, 500).
    public init(
        email: String?, phoneNumber: String?, userId: String?, sortBy: String?, order: String?, offset: Int64?, limit: Int64?
    ) throws(AuthError) {
        if let email {
            // Matched as stored (lower case); an address that could not be stored matches nobody.
            filter = .email(email.lowercased())
        } else if phoneNumber != nil {
            filter = .nobody
        } else if let userId {
            filter = .uid(userId)
        } else {
            filter = .all
        }
        switch sortBy {
        case nil, "SORT_BY_FIELD_UNSPECIFIED": self.sortBy = .userId
        case let name?:
            guard let field = SortField(rawValue: name) else {
                throw AuthError(.invalidArgument, detail: "sortBy must be one of \(SortField.allCases.map(\.rawValue))")
            }
            self.sortBy = field
        }
        switch order {
        case nil, "ORDER_UNSPECIFIED", "ASC": descending = false
        case "DESC": descending = true
        default: throw AuthError(.invalidArgument, detail: "order must be ASC or DESC")
        }
        let offset = offset ?? 0
        guard offset >= 0, offset <= Int64(Int32.max) else {
            throw AuthError(.invalidArgument, detail: "offset must not be negative")
        }
        self.offset = Int(offset)
        let limit = limit ?? Int64(Self.maximumLimit)
        guard (1...Int64(Self.maximumLimit)).contains(limit) else {
            throw AuthError(.invalidArgument, detail: "limit must be between 1 and \(Self.maximumLimit)")
        }
        self.limit = Int(limit)
    }
}
