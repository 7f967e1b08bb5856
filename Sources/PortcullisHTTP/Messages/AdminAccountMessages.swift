import Hummingbird
import PortcullisCore

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

/// The Admin API's `accounts` (create): what `createUser` sends.
struct AdminCreateAccountRequest: Decodable, ProfileBody {
    let localId: String?
    let email: String?
    let password: String?
    let emailVerified: Bool?
    let displayName: String?
    let photoUrl: String?
    let disabled: Bool?
    /// The Admin SDKs' older spelling of `disabled`.
    let disableUser: Bool?
}

/// The Admin API's `accounts:lookup`: `localId` as one id or a list.
struct AdminLookupRequest: Decodable {
    let localIds: [String]

    private enum CodingKeys: String, CodingKey { case localId }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let list = try? container.decodeIfPresent([String].self, forKey: .localId) {
            localIds = list
        } else {
            localIds = try container.decodeIfPresent(String.self, forKey: .localId).map { [$0] } ?? []
        }
    }
}

/// The Admin API's `accounts:update`.
struct AdminUpdateAccountRequest: Decodable, SingleUserBody {
    let localId: String?
    let disableUser: Bool?
    /// Seconds: tokens issued before it are revoked.
    let validSince: Int64?
    let emailVerified: Bool?
    /// The custom claims as a JSON object in a string, as the Admin SDKs send them.
    let customAttributes: String?
    let displayName: String?
}

/// The Admin API's `accounts:delete`.
struct AdminDeleteAccountRequest: Decodable, SingleUserBody {
    let localId: String?
}

/// The Admin API's `accounts:update` answer.
struct AdminUpdateAccountResponse: ResponseEncodable {
    var kind = "identitytoolkit#SetAccountInfoResponse"
    let localId: String
}
