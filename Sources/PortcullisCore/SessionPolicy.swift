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

    /// The watermark a revocation the gateway makes at `now` sets (DESIGN.md §1,
    /// "Revocation covers its own second"): the start of the second after the latest of
    /// `now`, the current watermark and the user's latest session start.
    ///
    /// ID tokens know their session's start only to the second, so a watermark inside a
    /// second would spare every token minted earlier in that second (a squatter signing in
    /// every few hundred milliseconds would always hold one). Rounding up to the next
    /// whole second kills them all; the revoking request starts its caller's session once
    /// that second is over (``WallClock/sleep(until:)``). Taking the current watermark and
    /// the latest session start into account moves the watermark forward past every session
    /// started so far, even one another instance's clock, running ahead, started.
    /// `UserRepository`'s update statements write this rule as SQL.
    public static func revocationWatermark(now: Timestamp, validSince: Timestamp, lastSignIn: Timestamp?) -> Timestamp {
        let latest = max(now, validSince, lastSignIn ?? Timestamp(microseconds: 0))
        return Timestamp(seconds: latest.seconds + 1)
    }

    /// When a session asked to start at `requested` starts: once the user's watermark has
    /// passed, if it lies ahead by at most ``watermarkWait`` (a revocation's own second,
    /// a few seconds at most when revocations follow each other), else at `requested`.
    ///
    /// A session that started inside a revocation's second would be revoked at once; a
    /// watermark further ahead is an admin's explicit `validSince`, taken as given.
    public static func sessionStart(requested: Timestamp, validSince: Timestamp) -> Timestamp {
        guard validSince > requested, validSince <= requested.adding(seconds: watermarkWait) else { return requested }
        return validSince
    }

    /// How far ahead a watermark may lie for a sign-in to wait for it: see
    /// ``sessionStart(requested:validSince:)``.
    public static let watermarkWait: Int64 = 5

    /// A session of a user who still exists: `TOKEN_EXPIRED` when it started (`authTime`)
    /// before the user's `validSince`, `USER_DISABLED` when the user is disabled.
    public static func requireLive(authTime: Int64, validSince: Timestamp, disabled: Bool) throws(AuthError) {
        if isRevoked(authTime: authTime, validSince: validSince) { throw AuthError(.tokenExpired) }
        if disabled { throw AuthError(.userDisabled) }
    }

    /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` unless the sign-in at `authTime` (the presented
    /// token's own `auth_time`) is within `windowSeconds` of `now`.
    ///
    /// Sensitive actions need it: deleting the account, changing its email or password,
    /// and adding a way in (linking a provider, giving a password to an account without
    /// one), so a stolen token too old to change the password cannot plant a credential
    /// that outlives the victim's password change either. Guest sessions are exempt
    /// (``isGuestSession(_:signInProvider:)``).
    public static func requireRecentSignIn(
        authTime: Int64, now: Int64, windowSeconds: Int, anonymous: Bool = false
    ) throws(AuthError) {
        guard !anonymous else { return }
        guard now - authTime <= Int64(windowSeconds) else { throw AuthError(.credentialTooOldLoginAgain) }
    }

    /// Whether a session is a guest's: an anonymous account signed in anonymously.
    ///
    /// A guest holds no credential to sign in again with, and upgrading one (linking an
    /// email and password or a provider) is how Firebase apps keep a guest's data, often
    /// days after the guest session began: it needs no recent sign-in. A custom-token user
    /// looks as bare, but its backend signs it in again at will, so it is no guest.
    public static func isGuestSession(_ user: User, signInProvider: String) -> Bool {
        user.isAnonymous && signInProvider == "anonymous"
    }
}
