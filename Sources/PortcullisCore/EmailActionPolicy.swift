/// Whether an email action code still works, and what applying it does to its user
/// (DESIGN.md §1).
///
/// A code is issued for one address: the account's email for a verification or reset,
/// the new address for an email change. It works only while nothing has revoked the
/// user since it was issued and while the account's email is still the one it had then;
/// otherwise it proves nothing about the account as it is now and is `INVALID_OOB_CODE`.
/// A squatter's pending email change dies with the takeover that evicts them, and an old
/// reset link with the password change that followed it.
public enum EmailActionPolicy {
    /// `INVALID_OOB_CODE` unless `code` still works for `user` (as stored now): issued at or
    /// after the user's watermark (a code issued inside a revocation's second is dated at
    /// its end, see `ActionCodeRepository`), for the email the account still has.
    public static func requireLive(_ code: ActionCode, for user: User) throws(AuthError) {
        guard code.uid == user.uid, code.issuedAt >= user.validSince, code.accountEmail != nil,
            user.email == code.accountEmail
        else { throw AuthError(.invalidOobCode) }
    }

    /// The update applying `code` makes to `user` as it stands now (locked by the caller);
    /// `INVALID_OOB_CODE` when the code no longer works for it (``requireLive(_:for:)``).
    ///
    /// - Verification marks the email verified and revokes nothing.
    /// - A reset sets the password hash made from the new password, marks the email
    ///   verified (the user just proved they receive its mail) and revokes every session.
    /// - An email change sets the new address, verified, and revokes every session.
    ///
    /// - Parameters:
    ///   - code: the code being applied (its kind, and the address it was sent to: for an
    ///     email change, the new one).
    ///   - user: the code's user as stored now.
    ///   - passwordHash: the new password's hash, for a reset; `nil` otherwise.
    ///   - now: when the code is applied: the revocation watermark a reset or an email change sets.
    public static func change(
        applying code: ActionCode, to user: User, passwordHash: String?, now: Timestamp
    ) throws(AuthError) -> UserUpdate {
        try requireLive(code, for: user)
        guard !user.disabled else { throw AuthError(.userDisabled) }
        var update: UserUpdate
        switch code.kind {
        case .verifyEmail:
            guard user.email == code.email else { throw AuthError(.invalidOobCode) }
            update = UserUpdate(emailVerified: true)
        case .passwordReset:
            guard user.email == code.email, let passwordHash else { throw AuthError(.invalidOobCode) }
            update = UserUpdate(emailVerified: true, passwordHash: passwordHash)
        case .verifyAndChangeEmail:
            update = UserUpdate(email: .some(code.email), emailVerified: true)
        }
        UserUpdatePolicy.applyImplications(to: &update, now: now)
        return update
    }

    /// The code found for a presented one: `INVALID_OOB_CODE` when there is none (unknown,
    /// used, or of another kind), `EXPIRED_OOB_CODE` once `now` reaches its expiry.
    public static func requireUnexpired(_ code: ActionCode?, now: Timestamp) throws(AuthError) -> ActionCode {
        guard let code else { throw AuthError(.invalidOobCode) }
        guard now < code.expiresAt else { throw AuthError(.expiredOobCode) }
        return code
    }

    /// How many codes of one kind a user may be sent per hour: more is a flood.
    public static let codesPerUserPerHour = 10

    /// Refuses another `kind` code to a user sent `recentCodes` of them in the last hour,
    /// at the limit (``floodError(_:)``).
    public static func requireUnflooded(_ kind: EmailActionKind, recentCodes: Int) throws(AuthError) {
        guard recentCodes < codesPerUserPerHour else { throw floodError(kind) }
    }

    /// The error a flood of `kind` answers: `RESET_PASSWORD_EXCEED_LIMIT` for resets,
    /// `TOO_MANY_ATTEMPTS_TRY_LATER` otherwise.
    public static func floodError(_ kind: EmailActionKind) -> AuthError {
        kind == .passwordReset ? AuthError(.resetPasswordExceedLimit) : AuthError(.tooManyAttemptsTryLater)
    }
}
