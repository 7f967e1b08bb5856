public import PortcullisJSON

/// An error the API reports to its caller.
///
/// Every wire code Portcullis can answer with is a case of ``AuthError/Code``:
/// grepping for a code finds its one definition. The HTTP layer renders an
/// `AuthError` as Google's error envelope; nothing else decides statuses.
public struct AuthError: Error, Sendable, Equatable {
    /// The wire code, e.g. `EMAIL_EXISTS`.
    public let code: Code
    /// Optional detail appended to the code as `CODE : detail` (client SDKs split on it).
    public let detail: String?

    /// Set when what was not found is named by the request's path (an admin resource, a
    /// JWKS): the answer is then that resource's absence, 404 `NOT_FOUND`, with the same
    /// message. Identity Toolkit answers an unknown `tenantId` in an end-user body with 400.
    public private(set) var namesPathResource = false

    /// Creates an error with a wire code and an optional detail.
    public init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The answer to a document that could not be read: `INVALID_ARGUMENT` with its detail.
    public init(_ error: JSONInputError) {
        self.init(.invalidArgument, detail: error.detail)
    }

    /// Runs `body`, which reads a document and judges what it read: the judgement's own
    /// errors pass through, a document that could not be read is `INVALID_ARGUMENT`.
    static func reading<Value>(_ body: () throws -> Value) throws(AuthError) -> Value {
        do {
            return try body()
        } catch let error as AuthError {
            throw error
        } catch let error as JSONInputError {
            throw AuthError(error)
        } catch {
            throw AuthError(.invalidArgument)
        }
    }

    /// This error as the answer of a path naming the missing resource (see ``namesPathResource``).
    public func onResourcePath() -> AuthError {
        var error = self
        error.namesPathResource = code == .tenantNotFound
        return error
    }

    /// The HTTP status of the answer.
    public var httpStatus: Int { namesPathResource ? 404 : code.httpStatus }

    /// The Google RPC status carried as `"status"` in the envelope.
    public var rpcStatus: String? { namesPathResource ? "NOT_FOUND" : code.rpcStatus }

    /// The `reason` of the envelope's `errors[0]`.
    public var reason: String { namesPathResource ? "notFound" : code.reason }

    /// The envelope's `message`: the code, then ` : detail` when there is one.
    public var message: String {
        guard let detail, !detail.isEmpty else { return code.rawValue }
        return "\(code.rawValue) : \(detail)"
    }

    /// The wire codes of the Identity Toolkit API and of Portcullis' admin API.
    public enum Code: String, Sendable, CaseIterable {
        // Request shape
        case invalidArgument = "INVALID_ARGUMENT"
        case payloadTooLarge = "PAYLOAD_TOO_LARGE"
        case notFound = "NOT_FOUND"
        case methodNotAllowed = "METHOD_NOT_ALLOWED"
        case apiKeyInvalid = "API key not valid. Please pass a valid API key."

        // Admin access
        case unauthenticated = "UNAUTHENTICATED"
        case permissionDenied = "PERMISSION_DENIED"

        // Projects and tenants
        case projectNotFound = "PROJECT_NOT_FOUND"
        case tenantNotFound = "TENANT_NOT_FOUND"
        case tenantIdMismatch = "TENANT_ID_MISMATCH"
        case projectDisabled = "PROJECT_DISABLED"
        case adminKeyNotFound = "ADMIN_KEY_NOT_FOUND"

        // Self-service restrictions and sign-in methods
        case adminOnlyOperation = "ADMIN_ONLY_OPERATION"
        case operationNotAllowed = "OPERATION_NOT_ALLOWED"
        case passwordLoginDisabled = "PASSWORD_LOGIN_DISABLED"

        // Accounts and credentials
        case emailExists = "EMAIL_EXISTS"
        case invalidEmail = "INVALID_EMAIL"
        case missingEmail = "MISSING_EMAIL"
        case missingPassword = "MISSING_PASSWORD"
        case weakPassword = "WEAK_PASSWORD"
        case passwordDoesNotMeetRequirements = "PASSWORD_DOES_NOT_MEET_REQUIREMENTS"
        case emailNotFound = "EMAIL_NOT_FOUND"
        case invalidPassword = "INVALID_PASSWORD"
        case invalidLoginCredentials = "INVALID_LOGIN_CREDENTIALS"
        case userDisabled = "USER_DISABLED"
        case userNotFound = "USER_NOT_FOUND"
        case missingLocalId = "MISSING_LOCAL_ID"
        case duplicateLocalId = "DUPLICATE_LOCAL_ID"
        case invalidLocalId = "INVALID_LOCAL_ID"
        case tooManyAttemptsTryLater = "TOO_MANY_ATTEMPTS_TRY_LATER"
        case credentialTooOldLoginAgain = "CREDENTIAL_TOO_OLD_LOGIN_AGAIN"
        case forbiddenClaim = "FORBIDDEN_CLAIM"
        case claimsTooLarge = "CLAIMS_TOO_LARGE"
        case invalidClaims = "INVALID_CLAIMS"
        case notDisabled = "NOT_DISABLED"
        case localIdListExceedsLimit = "LOCAL_ID_LIST_EXCEEDS_LIMIT"
        case invalidPageSelection = "INVALID_PAGE_SELECTION"

        // Tokens
        case missingIdToken = "MISSING_ID_TOKEN"
        case invalidIdToken = "INVALID_ID_TOKEN"
        case tokenExpired = "TOKEN_EXPIRED"
        case missingRefreshToken = "MISSING_REFRESH_TOKEN"
        case invalidRefreshToken = "INVALID_REFRESH_TOKEN"
        case invalidGrantType = "INVALID_GRANT_TYPE"

        // Federated sign-in and custom tokens
        case invalidIdpResponse = "INVALID_IDP_RESPONSE"
        case invalidProviderId = "INVALID_PROVIDER_ID"
        case federatedUserIdAlreadyLinked = "FEDERATED_USER_ID_ALREADY_LINKED"
        case missingOrInvalidNonce = "MISSING_OR_INVALID_NONCE"
        case missingCustomToken = "MISSING_CUSTOM_TOKEN"
        case invalidCustomToken = "INVALID_CUSTOM_TOKEN"
        case credentialMismatch = "CREDENTIAL_MISMATCH"
        case configurationNotFound = "CONFIGURATION_NOT_FOUND"
        case configurationExists = "CONFIGURATION_EXISTS"
        case serviceAccountNotFound = "SERVICE_ACCOUNT_NOT_FOUND"

        // Email actions
        case missingOobCode = "MISSING_OOB_CODE"
        case invalidOobCode = "INVALID_OOB_CODE"
        case expiredOobCode = "EXPIRED_OOB_CODE"
        case missingRequestType = "MISSING_REQ_TYPE"
        case invalidRequestType = "INVALID_REQ_TYPE"
        case missingNewEmail = "MISSING_NEW_EMAIL"
        case resetPasswordExceedLimit = "RESET_PASSWORD_EXCEED_LIMIT"
        case invalidContinueUri = "INVALID_CONTINUE_URI"
        case unauthorizedDomain = "UNAUTHORIZED_DOMAIN"

        // Imported password hashes (accounts:batchCreate). Identity Toolkit answers
        // `INVALID_HASH_ROUNDS` and `INVALID_HASH_PARAMETER` for bad parameters; the other
        // names follow the Admin SDKs' `auth/invalid-hash-*` codes in the same style.
        case missingHashAlgorithm = "MISSING_HASH_ALGORITHM"
        case invalidHashAlgorithm = "INVALID_HASH_ALGORITHM"
        case invalidHashKey = "INVALID_HASH_KEY"
        case invalidHashSaltSeparator = "INVALID_HASH_SALT_SEPARATOR"
        case invalidHashRounds = "INVALID_HASH_ROUNDS"
        case invalidHashMemoryCost = "INVALID_HASH_MEMORY_COST"
        case invalidHashBlockSize = "INVALID_HASH_BLOCK_SIZE"
        case invalidHashParallelization = "INVALID_HASH_PARALLELIZATION"
        case invalidHashDerivedKeyLength = "INVALID_HASH_DERIVED_KEY_LENGTH"
        case invalidHashParameter = "INVALID_HASH_PARAMETER"
        case invalidPasswordHash = "INVALID_PASSWORD_HASH"

        // Infrastructure
        case unavailable = "UNAVAILABLE"
        case internalError = "INTERNAL_ERROR"

        /// What the code means, as a sentence for people (the command line prints it; the
        /// API answers with the code itself).
        public var explanation: String {
            switch self {
            case .invalidArgument: "The request has an invalid value."
            case .payloadTooLarge: "The request body is too large."
            case .notFound: "There is nothing at this path."
            case .methodNotAllowed: "This path does not take that method."
            case .apiKeyInvalid: "The API key is not valid."
            case .unauthenticated: "No valid admin key was presented."
            case .permissionDenied: "The admin key's scope does not cover this resource."
            case .projectNotFound: "There is no such project."
            case .tenantNotFound: "There is no such tenant."
            case .tenantIdMismatch: "The token belongs to another tenant."
            case .projectDisabled: "Sign-in is disabled for this tenant."
            case .adminKeyNotFound: "There is no such admin key."
            case .adminOnlyOperation: "Only an administrator may do this for this tenant."
            case .operationNotAllowed: "This sign-in method is turned off for this tenant."
            case .passwordLoginDisabled: "Password sign-in is turned off for this tenant."
            case .emailExists: "Another account already uses this email."
            case .invalidEmail: "The email address is not valid."
            case .missingEmail: "An email address is required."
            case .missingPassword: "A password is required."
            case .weakPassword: "The password is too weak."
            case .passwordDoesNotMeetRequirements: "The password does not meet the tenant's requirements."
            case .emailNotFound: "No account has this email."
            case .invalidPassword: "The password is wrong."
            case .invalidLoginCredentials: "The email or the password is wrong."
            case .userDisabled: "The account is disabled."
            case .userNotFound: "There is no such account."
            case .missingLocalId: "A user id (localId) is required."
            case .duplicateLocalId: "Another account already has this user id."
            case .invalidLocalId: "The user id must be 1 to 128 characters."
            case .tooManyAttemptsTryLater: "Too many attempts; try again later."
            case .credentialTooOldLoginAgain: "This needs a recent sign-in; sign in again."
            case .forbiddenClaim: "That custom claim name is reserved."
            case .claimsTooLarge: "The custom claims are over 1,000 bytes."
            case .invalidClaims: "The custom claims must be a JSON object."
            case .notDisabled: "Without force, only a disabled account is deleted in bulk."
            case .localIdListExceedsLimit: "A bulk deletion names 1 to 1,000 user ids."
            case .invalidPageSelection: "The page token is not one this gateway issued."
            case .missingIdToken: "An ID token is required."
            case .invalidIdToken: "The ID token is not valid."
            case .tokenExpired: "The token has expired or was revoked; sign in again."
            case .missingRefreshToken: "A refresh token is required."
            case .invalidRefreshToken: "The refresh token is not valid."
            case .invalidGrantType: "Only grant_type=refresh_token is supported."
            case .invalidIdpResponse: "The identity provider's credential did not verify."
            case .invalidProviderId: "That identity provider is not configured or not enabled."
            case .federatedUserIdAlreadyLinked: "That provider identity belongs to another account."
            case .missingOrInvalidNonce: "The nonce does not match the identity provider's token."
            case .missingCustomToken: "A custom token is required."
            case .invalidCustomToken: "The custom token is not valid."
            case .credentialMismatch: "The custom token was signed for another project."
            case .configurationNotFound: "There is no such provider configuration."
            case .configurationExists: "That provider is configured already."
            case .serviceAccountNotFound: "There is no such service account."
            case .missingOobCode: "An action code (oobCode) is required."
            case .invalidOobCode: "The action code is not valid, or was used already."
            case .expiredOobCode: "The action code has expired."
            case .missingRequestType: "requestType is required."
            case .invalidRequestType: "requestType must be VERIFY_EMAIL, PASSWORD_RESET or VERIFY_AND_CHANGE_EMAIL."
            case .missingNewEmail: "The new email address (newEmail) is required."
            case .resetPasswordExceedLimit: "Too many password reset emails; try again later."
            case .invalidContinueUri: "The continue URL must be an absolute http(s) URL."
            case .unauthorizedDomain: "The continue URL's domain is not authorised for this tenant."
            case .missingHashAlgorithm: "Imported password hashes need a hash algorithm."
            case .invalidHashAlgorithm: "That password hash algorithm is not supported."
            case .invalidHashKey: "The hash algorithm's signer key is missing or not valid."
            case .invalidHashSaltSeparator: "The hash algorithm's salt separator is not valid."
            case .invalidHashRounds: "The hash algorithm's rounds are missing or out of range."
            case .invalidHashMemoryCost: "The hash algorithm's memory cost is missing or out of range."
            case .invalidHashBlockSize: "The hash algorithm's block size is missing or out of range."
            case .invalidHashParallelization: "The hash algorithm's parallelization is missing or out of range."
            case .invalidHashDerivedKeyLength: "The hash algorithm's derived key length is missing or out of range."
            case .invalidHashParameter: "The hash algorithm's parameters together cost more than allowed."
            case .invalidPasswordHash: "The imported password hash does not fit its hash algorithm."
            case .unavailable: "The database is unavailable; try again shortly."
            case .internalError: "Something failed inside Portcullis; its log has the details."
            }
        }

        /// The HTTP status class of the code.
        public var httpStatus: Int {
            switch self {
            case .unauthenticated: 401
            case .permissionDenied: 403
            case .notFound, .projectNotFound, .adminKeyNotFound, .configurationNotFound, .serviceAccountNotFound: 404
            case .configurationExists: 409
            case .methodNotAllowed: 405
            case .payloadTooLarge: 413
            case .internalError: 500
            case .unavailable: 503
            default: 400
            }
        }

        /// The Google RPC status name carried as `"status"` in the envelope.
        ///
        /// Present on every non-400 class (as Google's front end does) and on
        /// `INVALID_ARGUMENT`, whose status is its own name.
        public var rpcStatus: String? {
            switch self {
            case .invalidArgument, .apiKeyInvalid: "INVALID_ARGUMENT"
            case .unauthenticated: "UNAUTHENTICATED"
            case .permissionDenied: "PERMISSION_DENIED"
            case .notFound, .projectNotFound, .adminKeyNotFound, .configurationNotFound, .serviceAccountNotFound: "NOT_FOUND"
            case .configurationExists: "ALREADY_EXISTS"
            case .methodNotAllowed: "UNIMPLEMENTED"
            case .payloadTooLarge: "OUT_OF_RANGE"
            case .unavailable: "UNAVAILABLE"
            case .internalError: "INTERNAL"
            default: nil
            }
        }

        /// The `reason` of the envelope's `errors[0]`, as Google's front end names it.
        public var reason: String {
            switch self {
            case .apiKeyInvalid: "badRequest"
            case .unauthenticated: "unauthorized"
            case .permissionDenied: "forbidden"
            case .notFound, .projectNotFound, .adminKeyNotFound, .configurationNotFound, .serviceAccountNotFound: "notFound"
            case .configurationExists: "conflict"
            case .unavailable: "backendError"
            case .internalError: "backendError"
            default: "invalid"
            }
        }
    }
}

extension AuthError: CustomStringConvertible {
    /// The explanation, then the wire message: `There is no such tenant. (TENANT_NOT_FOUND)`.
    public var description: String { "\(code.explanation) (\(message))" }
}
