/// The limits and rules of admin user management (`/v1/projects/{p}[/tenants/{t}]/accounts…`):
/// Identity Toolkit's, and the decisions Portcullis makes where it has no counterpart.
public enum AdminUserPolicy {
    /// `accounts:batchDelete` takes 1–1000 ids (`LOCAL_ID_LIST_EXCEEDS_LIMIT`), as Identity Toolkit.
    public static let batchDeleteLimit = 1000
    /// `accounts:batchGet`'s `maxResults`: 1–1000.
    public static let pageSizes = 1...1000
    /// `accounts:batchGet`'s `maxResults` when absent.
    public static let defaultPageSize = 20
    /// `accounts:lookup` identifiers per request, all kinds together (the Admin SDKs send at
    /// most 100; the bound keeps one request one bounded query).
    public static let lookupLimit = 1000

    /// Portcullis has no phone provider: a phone number given to create or update a user is
    /// refused rather than silently dropped (lookups and queries by phone match nobody).
    public static var phoneNumbersUnsupported: AuthError {
        AuthError(.operationNotAllowed, detail: "phone numbers are not supported")
    }

    /// The latest `validSince` an administrator may set: the end of year 9999, in seconds.
    public static let latestValidSince: Int64 = 253_402_300_799

    /// An administrator's `validSince` (unix seconds) as an instant; `INVALID_ARGUMENT` outside
    /// 0 through year 9999 (a larger number would not fit the microsecond watermark).
    public static func validSince(_ seconds: Int64) throws(AuthError) -> Timestamp {
        guard (0...latestValidSince).contains(seconds) else {
            throw AuthError(.invalidArgument, detail: "validSince must be unix seconds between 0 and \(latestValidSince)")
        }
        return Timestamp(seconds: seconds)
    }

    /// What a `batchDelete` without `force` answers for an account that is not disabled.
    public static var notDisabled: AuthError {
        AuthError(.notDisabled, detail: "Disable the account before batch deletion.")
    }

    /// `deleteAttribute`: the attributes an update can clear.
    public enum Attribute: String, Sendable, CaseIterable {
        case displayName = "DISPLAY_NAME"
        case photoURL = "PHOTO_URL"
        /// The email (the `password` link goes with it; the password itself stays).
        case email = "EMAIL"
        /// The password (and its `password` link).
        case password = "PASSWORD"
    }

    /// Parses `deleteAttribute`; `USER_ATTRIBUTE_NAME_UNSPECIFIED` is skipped, anything else
    /// unknown is `INVALID_ARGUMENT`.
    public static func attributes(_ names: [String]) throws(AuthError) -> Set<Attribute> {
        var attributes: Set<Attribute> = []
        for name in names where name != "USER_ATTRIBUTE_NAME_UNSPECIFIED" {
            guard let attribute = Attribute(rawValue: name) else {
                throw AuthError(.invalidArgument, detail: "deleteAttribute: unknown attribute \(name)")
            }
            attributes.insert(attribute)
        }
        return attributes
    }

    /// Provider ids `linkProviderUserInfo` cannot link: these ways in are made by their own
    /// operations (a password, a guest sign-up, a custom token), and phone numbers do not exist here.
    public static let unlinkableProviders: Set<String> = [ProviderLink.password, "phone", "anonymous", "custom"]

    /// `linkProviderUserInfo` as a link: `INVALID_ARGUMENT` without `providerId` or `rawId`,
    /// `INVALID_PROVIDER_ID` for a provider that is not federated, `INVALID_ARGUMENT` for
    /// profile fields over ``UserProfile``'s limits.
    public static func link(
        providerId: String?, rawId: String?, email: String?, displayName: String?, photoURL: String?
    ) throws(AuthError) -> ProviderLink {
        guard let providerId, !providerId.isEmpty else {
            throw AuthError(.invalidArgument, detail: "linkProviderUserInfo.providerId is required")
        }
        guard let rawId, !rawId.isEmpty, rawId.utf8.count <= 512 else {
            throw AuthError(.invalidArgument, detail: "linkProviderUserInfo.rawId must be 1 to 512 bytes")
        }
        guard !unlinkableProviders.contains(providerId), providerId.utf8.count <= 128 else {
            throw AuthError(.invalidProviderId, detail: "\(providerId) cannot be linked by an administrator")
        }
        return ProviderLink(
            providerId: providerId, federatedId: rawId, email: try email.map { text throws(AuthError) in try EmailAddress.validate(text) },
            displayName: try displayName.map { name throws(AuthError) in try UserProfile.validate(displayName: name) },
            photoURL: try photoURL.map { url throws(AuthError) in try UserProfile.validate(photoURL: url) })
    }
}
