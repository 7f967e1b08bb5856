/// What a failed password sign-in tells its caller (DESIGN.md §2).
public enum SignInPolicy {
    /// `INVALID_LOGIN_CREDENTIALS` under email-enumeration protection, whether or not the
    /// email exists; otherwise `EMAIL_NOT_FOUND` or `INVALID_PASSWORD`.
    public static func wrongCredentials(emailKnown: Bool, privacy: Bool) -> AuthError {
        if privacy { return AuthError(.invalidLoginCredentials) }
        return AuthError(emailKnown ? .invalidPassword : .emailNotFound)
    }
}
