import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisJSON

/// An Admin API body about one user, named by `localId`.
protocol SingleUserBody {
    var localId: String? { get }
}

extension SingleUserBody {
    /// The user's id; `MISSING_LOCAL_ID` when absent.
    var uid: String {
        get throws(AuthError) {
            guard let localId, !localId.isEmpty else { throw AuthError(.missingLocalId) }
            return localId
        }
    }
}

/// Second factors as the Admin SDKs send them: an update's `mfa` and a create's `mfaInfo`.
/// Portcullis has none, so only an empty list (how the SDKs clear factors) is accepted.
struct SecondFactors: Decodable {
    let enrollments: [JSONValue]?

    /// `INVALID_ARGUMENT` naming `field` when any factor is enrolled.
    static func requireNone(_ enrollments: [JSONValue]?, field: String) throws(AuthError) {
        guard enrollments?.isEmpty ?? true else { throw AuthError.unsupported(field, "multi-factor authentication") }
    }
}

/// The Admin API's `accounts` (create): what `createUser` sends.
struct AdminCreateAccountRequest: AdminResourceBody, ProfileBody {
    let localId: String?
    let email: String?
    let password: String?
    let emailVerified: Bool?
    let displayName: String?
    let photoUrl: String?
    let phoneNumber: String?
    let disabled: Bool?
    /// The Admin SDKs' older spelling of `disabled`.
    let disableUser: Bool?
    let mfaInfo: [JSONValue]?

    /// `INVALID_ARGUMENT` when the body enrols a second factor.
    func requireNoSecondFactors() throws(AuthError) {
        try SecondFactors.requireNone(mfaInfo, field: "mfaInfo")
    }
}

/// A field Identity Toolkit takes as one value or a list (`localId`, `email`, …).
struct OneOrMany<Element: Decodable>: Decodable {
    let values: [Element]

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let list = try? container.decode([Element].self) {
            values = list
        } else {
            values = [try container.decode(Element.self)]
        }
    }
}

/// The Admin API's `accounts:lookup`: any combination of `localId[]`, `email[]`,
/// `phoneNumber[]` and `federatedUserId[]` (each also as a single value).
struct AdminLookupRequest: AdminResourceBody {
    /// One `federatedUserId[]` entry.
    struct Identity: Decodable {
        let providerId: String?
        let rawId: String?
    }

    let localId: OneOrMany<String>?
    let email: OneOrMany<String>?
    let phoneNumber: OneOrMany<String>?
    let federatedUserId: OneOrMany<Identity>?

    /// The identities named (entries without both ids are skipped, as the emulator does).
    var federatedIds: [FederatedUserId] {
        (federatedUserId?.values ?? []).compactMap { entry in
            guard let provider = entry.providerId, !provider.isEmpty, let raw = entry.rawId, !raw.isEmpty else { return nil }
            return FederatedUserId(providerId: provider, rawId: raw)
        }
    }
}

/// The Admin API's `accounts:update`.
struct AdminUpdateAccountRequest: AdminResourceBody, SingleUserBody {
    /// `linkProviderUserInfo`: a federated identity to link.
    struct ProviderUserInfo: Decodable {
        let providerId: String?
        let rawId: String?
        /// Accepted in place of `rawId`.
        let federatedId: String?
        let email: String?
        let displayName: String?
        let photoUrl: String?
    }

    let localId: String?
    let email: String?
    let password: String?
    let displayName: String?
    let photoUrl: String?
    let phoneNumber: String?
    let disableUser: Bool?
    /// Seconds: tokens issued before it are revoked.
    let validSince: Int64?
    let emailVerified: Bool?
    /// The custom claims as a JSON object in a string, as the Admin SDKs send them.
    let customAttributes: String?
    /// `DISPLAY_NAME`, `PHOTO_URL`, `EMAIL`, `PASSWORD`: attributes to clear.
    let deleteAttribute: [String]?
    /// Providers to unlink (`password` removes the password).
    let deleteProvider: [String]?
    let linkProviderUserInfo: ProviderUserInfo?
    let mfa: SecondFactors?

    /// The changes, validated: custom claims (`FORBIDDEN_CLAIM`, `CLAIMS_TOO_LARGE`,
    /// `INVALID_CLAIMS`), the identity to link, and no second factor.
    var changes: AdminAccountService.Changes {
        get throws(AuthError) {
            try SecondFactors.requireNone(mfa?.enrollments, field: "mfa.enrollments")
            return AdminAccountService.Changes(
                email: email, password: password, displayName: displayName, photoURL: photoUrl, phoneNumber: phoneNumber,
                disabled: disableUser, emailVerified: emailVerified,
                customAttributes: try customAttributes.map { text throws(AuthError) in try CustomClaims.parse(text) },
                validSince: validSince, deleteAttributes: deleteAttribute ?? [], deleteProviders: deleteProvider ?? [],
                linkProvider: try linkProviderUserInfo.map { info throws(AuthError) in
                    try AdminUserPolicy.link(
                        providerId: info.providerId, rawId: info.rawId ?? info.federatedId, email: info.email,
                        displayName: info.displayName, photoURL: info.photoUrl)
                })
        }
    }
}

/// The Admin API's `accounts:delete`.
struct AdminDeleteAccountRequest: AdminResourceBody, SingleUserBody {
    let localId: String?
}

/// The Admin API's `accounts:batchDelete`.
struct AdminBatchDeleteRequest: AdminResourceBody {
    let localIds: [String]?
    /// Delete accounts that are not disabled too (the Admin SDKs' `delete_users` sends `true`).
    let force: Bool?
}

/// `accounts:batchDelete`'s answer: `errors` only when some id was refused.
struct AdminBatchDeleteResponse: ResponseEncodable {
    /// One refused id.
    struct Failure: Encodable {
        let index: Int
        let localId: String
        let message: String
    }

    var kind = "identitytoolkit#BatchDeleteAccountsResponse"
    let errors: [Failure]?
}

/// `accounts:batchGet`'s answer: a page of users and the next page's token.
struct AdminDownloadResponse: ResponseEncodable {
    var kind = "identitytoolkit#DownloadAccountResponse"
    let users: [UserInfo]
    let nextPageToken: String?
}

/// The Admin API's `accounts:query` (Identity Toolkit's `QueryUserInfo`).
struct AdminQueryRequest: AdminResourceBody {
    /// One `expression[]` entry; only the first entry, and its first field of `email`,
    /// `phoneNumber`, `userId`, is evaluated.
    struct Expression: Decodable {
        let email: String?
        let phoneNumber: String?
        let userId: String?
    }

    let returnUserInfo: Bool?
    let limit: Int64?
    let offset: Int64?
    let sortBy: String?
    let order: String?
    let expression: [Expression]?

    /// The validated query.
    var query: UserQuery {
        get throws(AuthError) {
            let first = expression?.first
            return try UserQuery(
                email: first?.email, phoneNumber: first?.phoneNumber, userId: first?.userId, sortBy: sortBy, order: order,
                offset: offset, limit: limit)
        }
    }
}

/// `accounts:query`'s answer: how many, and the users unless only the count was asked for.
struct AdminQueryResponse: ResponseEncodable {
    /// A number, as a string.
    let recordsCount: String
    let userInfo: [UserInfo]?
}
