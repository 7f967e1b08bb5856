/// Decisions about existing sessions: revocation and recent sign-in.
///
/// All times are whole unix seconds; "before" is strictly earlier, so a token
/// issued in the same second as a revocation survives it (DESIGN.md §1).
public enum SessionPolicy {
    /// Whether a session whose `auth_time` (or a refresh token issued) at `time`
    /// is revoked by the user's `validSince` watermark.
    public static func isRevoked(sessionTime time: Int64, validSince: Int64) -> Bool {
        time < validSince
    }

    /// A session of a user who still exists: `TOKEN_EXPIRED` when it started (`authTime`)
    /// before the user's `validSince`, `USER_DISABLED` when the user is disabled.
    public static func requireLive(authTime: Int64, validSince: Int64, disabled: Bool) throws(AuthError) {
        if isRevoked(sessionTime: authTime, validSince: validSince) { throw AuthError(.tokenExpired) }
        if disabled { throw AuthError(.userDisabled) }
    }

    /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` unless the sign-in at `authTime` is within `windowSeconds` of `now`.
    public static func requireRecentSignIn(authTime: Int64, now: Int64, windowSeconds: Int) throws(AuthError) {
        guard now - authTime <= Int64(windowSeconds) else { throw AuthError(.credentialTooOldLoginAgain) }
    }
}

/// Custom claims a developer may put into ID tokens.
public enum CustomClaims {
    /// Names Firebase reserves; a custom claim may not use them.
    public static let reserved: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "firebase", "iat", "iss", "jti",
        "nbf", "nonce", "sub",
    ]

    /// The largest serialized size, in bytes.
    public static let maximumBytes = 1000

    /// `FORBIDDEN_CLAIM : <name>` for a reserved name, `CLAIMS_TOO_LARGE` over 1000 bytes.
    public static func validate(_ claims: [String: JSONValue]) throws(AuthError) {
        if let name = claims.keys.sorted().first(where: reserved.contains) {
            throw AuthError(.forbiddenClaim, detail: name)
        }
        guard JSONValue.object(claims).serializedBytes().count <= maximumBytes else {
            throw AuthError(.claimsTooLarge)
        }
    }

    /// Parses the Admin API's `customAttributes` string (a JSON object) and validates it.
    public static func parse(_ text: String) throws(AuthError) -> [String: JSONValue] {
        guard !text.isEmpty else { return [:] }
        guard case .object(let claims) = try JSONValue.parse(Array(text.utf8)) else {
            throw AuthError(.invalidClaims)
        }
        try validate(claims)
        return claims
    }
}
