/// What applying an email action code does to its user (DESIGN.md §1, issue 14).
///
/// A code is issued for one address: the account's email for a verification or reset,
/// the new address for an email change. If the account's email changed since, the code
/// proves nothing about the current address and is `INVALID_OOB_CODE`.
public enum EmailActionPolicy {
    /// The update applying a code of `kind`, issued for `address`, makes to `user` as it
    /// stands now (locked by the caller).
    ///
    /// - Verification marks the email verified and revokes nothing.
    /// - A reset sets the password hash made from the new password, marks the email
    ///   verified (the user just proved they receive its mail) and revokes every session.
    /// - An email change sets the new address, verified, and revokes every session.
    ///
    /// - Parameters:
    ///   - kind: what the code was issued for.
    ///   - address: the address the code was sent to (for an email change, the new one).
    ///   - user: the code's user as stored now.
    ///   - passwordHash: the new password's hash, for a reset; `nil` otherwise.
    ///   - now: when the code is applied: the revocation watermark a reset or an email change sets.
    public static func change(
        applying kind: EmailActionKind, issuedFor address: String, to user: User, passwordHash: String?, now: Timestamp
    ) throws(AuthError) -> UserUpdate {
        guard !user.disabled else { throw AuthError(.userDisabled) }
        var update: UserUpdate
        switch kind {
        case .verifyEmail:
            guard user.email == address else { throw AuthError(.invalidOobCode) }
            update = UserUpdate(emailVerified: true)
        case .passwordReset:
            guard user.email == address, let passwordHash else { throw AuthError(.invalidOobCode) }
            update = UserUpdate(emailVerified: true, passwordHash: passwordHash)
        case .verifyAndChangeEmail:
            update = UserUpdate(email: .some(address), emailVerified: true)
        }
        UserUpdatePolicy.applyImplications(to: &update, now: now)
        return update
    }

    /// How many codes of one kind a user may be sent per hour: more is a flood
    /// (`RESET_PASSWORD_EXCEED_LIMIT` for resets, `TOO_MANY_ATTEMPTS_TRY_LATER` otherwise).
    public static let codesPerUserPerHour = 10

    /// The error a flood of `kind` answers.
    public static func floodError(_ kind: EmailActionKind) -> AuthError {
        kind == .passwordReset ? AuthError(.resetPasswordExceedLimit) : AuthError(.tooManyAttemptsTryLater)
    }
}
