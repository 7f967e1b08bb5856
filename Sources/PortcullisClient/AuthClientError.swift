/// An error of the client SDK, named as Firebase's client SDKs name it
/// (`auth/admin-restricted-operation` is ``Code/adminRestrictedOperation``), with what the
/// gateway said kept beside it.
public struct AuthClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as an app reacts to it.
    public enum Code: String, Sendable, CaseIterable {
        /// The tenant lets only administrators do this (`ADMIN_ONLY_OPERATION`): sign-up
        /// or self-deletion is switched off.
        case adminRestrictedOperation = "admin-restricted-operation"
        /// The action needs a recent sign-in (`CREDENTIAL_TOO_OLD_LOGIN_AGAIN`):
        /// reauthenticate, then retry.
        case requiresRecentLogin = "requires-recent-login"
        /// Another account uses the email (`EMAIL_EXISTS`).
        case emailAlreadyInUse = "email-already-in-use"
        /// The email belongs to an account that signs in another way (the gateway's
        /// `needConfirmation`); ``AuthClientError/email`` says which email.
        case accountExistsWithDifferentCredential = "account-exists-with-different-credential"
        /// The provider identity is linked to another user (`FEDERATED_USER_ID_ALREADY_LINKED`).
        case credentialAlreadyInUse = "credential-already-in-use"
        /// The account is disabled (`USER_DISABLED`).
        case userDisabled = "user-disabled"
        /// No account has this email or uid (`EMAIL_NOT_FOUND`, `USER_NOT_FOUND`).
        case userNotFound = "user-not-found"
        /// The password is wrong (`INVALID_PASSWORD`).
        case wrongPassword = "wrong-password"
        /// The credential is wrong, or the tenant hides which part is
        /// (`INVALID_LOGIN_CREDENTIALS`, `INVALID_IDP_RESPONSE`).
        case invalidCredential = "invalid-credential"
        /// Too many attempts (`TOO_MANY_ATTEMPTS_TRY_LATER`, `RESET_PASSWORD_EXCEED_LIMIT`).
        case tooManyRequests = "too-many-requests"
        /// The token belongs to another tenant than this ``Auth`` (`TENANT_ID_MISMATCH`).
        case tenantIdMismatch = "tenant-id-mismatch"
        /// The tenant does not exist (`TENANT_NOT_FOUND`).
        case invalidTenantId = "invalid-tenant-id"
        /// Sign-in is switched off for the tenant (`PROJECT_DISABLED`).
        case projectDisabled = "project-disabled"
        /// The sign-in method is switched off (`OPERATION_NOT_ALLOWED`, `PASSWORD_LOGIN_DISABLED`).
        case operationNotAllowed = "operation-not-allowed"
        /// The email is not a valid address (`INVALID_EMAIL`).
        case invalidEmail = "invalid-email"
        /// An email is required (`MISSING_EMAIL`).
        case missingEmail = "missing-email"
        /// A password is required (`MISSING_PASSWORD`).
        case missingPassword = "missing-password"
        /// The password does not meet the tenant's policy (`WEAK_PASSWORD`,
        /// `PASSWORD_DOES_NOT_MEET_REQUIREMENTS`).
        case weakPassword = "weak-password"
        /// The session was revoked or has expired (`TOKEN_EXPIRED`): sign in again.
        case userTokenExpired = "user-token-expired"
        /// The ID or refresh token is not one the gateway accepts (`INVALID_ID_TOKEN`,
        /// `INVALID_REFRESH_TOKEN`).
        case invalidUserToken = "invalid-user-token"
        /// The custom token did not verify (`INVALID_CUSTOM_TOKEN`, `MISSING_CUSTOM_TOKEN`).
        case invalidCustomToken = "invalid-custom-token"
        /// The custom token was signed for another tenant or project (`CREDENTIAL_MISMATCH`).
        case customTokenMismatch = "custom-token-mismatch"
        /// The action code was already used or never existed (`INVALID_OOB_CODE`).
        case invalidActionCode = "invalid-action-code"
        /// The action code has expired (`EXPIRED_OOB_CODE`).
        case expiredActionCode = "expired-action-code"
        /// The continue URL is not allowed (`INVALID_CONTINUE_URI`, `UNAUTHORIZED_DOMAIN`).
        case invalidContinueURI = "invalid-continue-uri"
        /// The gateway refused the API key.
        case invalidAPIKey = "invalid-api-key"
        /// A reauthentication signed in as another user than the one reauthenticated.
        case userMismatch = "user-mismatch"
        /// The provider is not linked to the user (unlink).
        case noSuchProvider = "no-such-provider"
        /// The gateway could not be reached, did not answer in time, or is unavailable
        /// for now (503); retrying later may work.
        case networkRequestFailed = "network-request-failed"
        /// Anything else: an answer this SDK does not understand, or a code it does not
        /// know (``AuthClientError/serverCode`` keeps it).
        case internalError = "internal-error"
    }

    /// What went wrong.
    public let code: Code
    /// The gateway's wire code (`ADMIN_ONLY_OPERATION`), when the gateway answered.
    public let serverCode: String?
    /// The detail after `CODE : ` in the gateway's message, or the transport's reason.
    public let detail: String?
    /// The HTTP status, when the gateway answered.
    public let httpStatus: Int?
    /// For ``Code/accountExistsWithDifferentCredential``: the email of the existing account.
    public let email: String?

    /// An error.
    public init(_ code: Code, serverCode: String? = nil, detail: String? = nil, httpStatus: Int? = nil, email: String? = nil) {
        self.code = code
        self.serverCode = serverCode
        self.detail = detail
        self.httpStatus = httpStatus
        self.email = email
    }

    /// `auth/<code>`, then the gateway's code and detail.
    public var description: String {
        var text = "auth/\(code.rawValue)"
        if let serverCode { text += " (\(serverCode)\(detail.map { " : \($0)" } ?? ""))" } else if let detail { text += ": \(detail)" }
        return text
    }

    /// Whether the gateway says the session is over: the user is signed out.
    var endsSession: Bool {
        switch code {
        case .userTokenExpired, .userDisabled, .userNotFound, .invalidUserToken: true
        default: false
        }
    }
}
