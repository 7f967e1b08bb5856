/// The one place the gateway's wire codes become client error codes.
extension AuthClientError {
    /// The wire codes this SDK names; any other becomes ``Code/internalError`` with the
    /// wire code kept in ``serverCode``.
    public static let wireCodes: [String: Code] = [
        "ADMIN_ONLY_OPERATION": .adminRestrictedOperation,
        "CREDENTIAL_TOO_OLD_LOGIN_AGAIN": .requiresRecentLogin,
        "EMAIL_EXISTS": .emailAlreadyInUse,
        "FEDERATED_USER_ID_ALREADY_LINKED": .credentialAlreadyInUse,
        "USER_DISABLED": .userDisabled,
        "EMAIL_NOT_FOUND": .userNotFound,
        "USER_NOT_FOUND": .userNotFound,
        "INVALID_PASSWORD": .wrongPassword,
        "INVALID_LOGIN_CREDENTIALS": .invalidCredential,
        "INVALID_IDP_RESPONSE": .invalidCredential,
        "TOO_MANY_ATTEMPTS_TRY_LATER": .tooManyRequests,
        "RESET_PASSWORD_EXCEED_LIMIT": .tooManyRequests,
        "TENANT_ID_MISMATCH": .tenantIdMismatch,
        "TENANT_NOT_FOUND": .invalidTenantId,
        "PROJECT_DISABLED": .projectDisabled,
        "OPERATION_NOT_ALLOWED": .operationNotAllowed,
        "PASSWORD_LOGIN_DISABLED": .operationNotAllowed,
        "INVALID_EMAIL": .invalidEmail,
        "MISSING_EMAIL": .missingEmail,
        "MISSING_PASSWORD": .missingPassword,
        "WEAK_PASSWORD": .weakPassword,
        "PASSWORD_DOES_NOT_MEET_REQUIREMENTS": .weakPassword,
        "TOKEN_EXPIRED": .userTokenExpired,
        "INVALID_ID_TOKEN": .invalidUserToken,
        "INVALID_REFRESH_TOKEN": .invalidUserToken,
        "INVALID_CUSTOM_TOKEN": .invalidCustomToken,
        "MISSING_CUSTOM_TOKEN": .invalidCustomToken,
        "CREDENTIAL_MISMATCH": .customTokenMismatch,
        "INVALID_OOB_CODE": .invalidActionCode,
        "EXPIRED_OOB_CODE": .expiredActionCode,
        "INVALID_CONTINUE_URI": .invalidContinueURI,
        "UNAUTHORIZED_DOMAIN": .invalidContinueURI,
        "API key not valid. Please pass a valid API key.": .invalidAPIKey,
        "UNAVAILABLE": .networkRequestFailed,
    ]

    /// The error for the gateway's envelope message (`CODE` or `CODE : detail`) at `status`.
    public init(wireMessage message: String, status: Int) {
        // Client SDKs split on the first " : ": the code before, the detail after.
        let parts = message.split(separator: " : ", maxSplits: 1, omittingEmptySubsequences: false)
        let serverCode = String(parts[0])
        let detail = parts.count > 1 ? String(parts[1]) : nil
        // A gateway answers 503 with the envelope; a proxy in front of it may answer 502–504
        // without one. Either way the request may work later.
        let fallback: Code = (502...504).contains(status) ? .networkRequestFailed : .internalError
        self.init(Self.wireCodes[serverCode] ?? fallback, serverCode: serverCode, detail: detail, httpStatus: status)
    }
}
