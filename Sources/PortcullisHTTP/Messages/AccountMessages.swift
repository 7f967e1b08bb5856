import Hummingbird
import PortcullisAuth
import PortcullisCore

/// A body that may name the tenant (`tenantId`; absent or empty = project users).
protocol TenantScopedBody {
    var tenantId: String? { get }
}

extension TenantScopedBody {
    /// The tenant, `nil` for project users.
    var tenant: String? { tenantId?.isEmpty == false ? tenantId : nil }
}

/// The profile fields an end user or an administrator sets.
protocol ProfileBody {
    var displayName: String? { get }
    var photoUrl: String? { get }
}

extension ProfileBody {
    var profile: AccountService.Profile { AccountService.Profile(displayName: displayName, photoURL: photoUrl) }
}

/// `accounts:signUp`: a password account, an anonymous one (no email), or an anonymous
/// user's upgrade (`idToken`).
struct SignUpRequest: Decodable, TenantScopedBody, ProfileBody {
    let tenantId: String?
    let email: String?
    let password: String?
    let displayName: String?
    let photoUrl: String?
    let idToken: String?
}

/// `accounts:signUp`'s answer.
struct SignUpResponse: ResponseEncodable {
    var kind = "identitytoolkit#SignupNewUserResponse"
    let localId: String
    let email: String?
    let displayName: String?
    let idToken: String
    let refreshToken: String
    let expiresIn: String
}

/// `accounts:signInWithPassword`.
struct SignInRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    let email: String?
    let password: String?
}

/// `accounts:signInWithPassword`'s answer.
struct SignInResponse: ResponseEncodable {
    var kind = "identitytoolkit#VerifyPasswordResponse"
    let localId: String
    let email: String
    let displayName: String
    var registered = true
    let idToken: String
    let refreshToken: String
    let expiresIn: String
}

/// `accounts:lookup` and `accounts:delete` (end user): the caller's own account.
struct IDTokenRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    let idToken: String?
}

/// `accounts:lookup`'s answer (end user and admin).
struct LookupResponse: ResponseEncodable {
    var kind = "identitytoolkit#GetAccountInfoResponse"
    /// Absent, not empty, when no user matched (Identity Toolkit's shape).
    let users: [UserInfo]?
}

/// `accounts:update` (end user): profile, email and password changes.
struct UpdateAccountRequest: Decodable, TenantScopedBody, ProfileBody {
    let tenantId: String?
    let idToken: String?
    let email: String?
    let password: String?
    let displayName: String?
    let photoUrl: String?
    /// `DISPLAY_NAME`, `PHOTO_URL`: attributes to clear.
    let deleteAttribute: [String]?
    /// Providers to unlink (`password` removes the password).
    let deleteProvider: [String]?
    /// An email action code to apply instead (verification, email change): no `idToken` needed.
    let oobCode: String?
}

/// An answer that is only its `kind` (`accounts:delete`).
struct KindResponse: ResponseEncodable {
    let kind: String
}

/// `accounts:createAuthUri`: which ways in an email has.
struct CreateAuthUriRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    let identifier: String?
    let email: String?
}

/// `accounts:createAuthUri`'s answer; without the methods when email privacy is on.
struct CreateAuthUriResponse: ResponseEncodable {
    var kind = "identitytoolkit#CreateAuthUriResponse"
    /// Opaque; unused by Portcullis, but SDKs expect one.
    let sessionId: String
    let registered: Bool?
    let allProviders: [String]?
    let signinMethods: [String]?
}
