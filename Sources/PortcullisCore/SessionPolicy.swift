/// Decisions about existing sessions: revocation and recent sign-in (DESIGN.md §1).
///
/// A session is one sign-in and every token refreshed from it. Its age for
/// revocation is when it *started* — never when its refresh token last rotated —
/// so a client refreshing in a loop cannot keep a revoked session alive.
public enum SessionPolicy {
    /// The one revocation rule: a session that started strictly before the user's
    /// `validSince` watermark is revoked.
    ///
    /// Refresh sessions know their start to the microsecond and are judged at that
    /// precision; the refresh statement in `RefreshSessionRepository` is this rule
    /// written as SQL over the same two columns.
    public static func isRevoked(sessionStart: Timestamp, validSince: Timestamp) -> Bool {
        sessionStart < validSince
    }

    /// The rule for an ID token, which knows its session's start only to the second
    /// (`auth_time`): judged at that precision, a token whose `auth_time` is the
    /// watermark's own second survives ("strictly earlier in whole seconds").
    public static func isRevoked(authTime: Int64, validSince: Timestamp) -> Bool {
        isRevoked(sessionStart: Timestamp(seconds: authTime), validSince: Timestamp(seconds: validSince.seconds))
    }

    /// A session of a user who still exists: `TOKEN_EXPIRED` when it started (`authTime`)
    /// before the user's `validSince`, `USER_DISABLED` when the user is disabled.
    public static func requireLive(authTime: Int64, validSince: Timestamp, disabled: Bool) throws(AuthError) {
        if isRevoked(authTime: authTime, validSince: validSince) { throw AuthError(.tokenExpired) }
        if disabled { throw AuthError(.userDisabled) }
    }

    /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` unless the sign-in at `authTime` (the presented
    /// token's own `auth_time`) is within `windowSeconds` of `now`.
    ///
    /// Anonymous accounts are exempt: they hold no credential to sign in again with,
    /// and upgrading one (linking an email and password) is how Firebase apps keep
    /// a guest's data, often days after the guest session began.
    public static func requireRecentSignIn(
        authTime: Int64, now: Int64, windowSeconds: Int, anonymous: Bool = false
    ) throws(AuthError) {
        guard !anonymous else { return }
        guard now - authTime <= Int64(windowSeconds) else { throw AuthError(.credentialTooOldLoginAgain) }
    }
}
