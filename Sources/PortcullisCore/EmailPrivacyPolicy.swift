/// What the gateway tells a caller about which emails have accounts (DESIGN.md §2).
///
/// Under email-enumeration protection (`emailPrivacyConfig.enableImprovedEmailPrivacy`) no
/// answer depends on whether an address has an account: sign-in, `createAuthUri`, a
/// password reset and an email change all answer alike for a known and an unknown address.
/// Without it they say what Firebase says.
public struct EmailPrivacyPolicy: Sendable, Equatable {
    /// Whether enumeration protection is on.
    public let protectsEmails: Bool

    /// The policy of a tenant (or the project users) with `settings`.
    public init(settings: TenantSettings) {
        protectsEmails = settings.enableImprovedEmailPrivacy
    }

    /// A failed password sign-in: `INVALID_LOGIN_CREDENTIALS` under protection, whether or
    /// not the email exists; otherwise `EMAIL_NOT_FOUND` or `INVALID_PASSWORD`.
    public func wrongCredentials(emailKnown: Bool) -> AuthError {
        if protectsEmails { return AuthError(.invalidLoginCredentials) }
        return AuthError(emailKnown ? .invalidPassword : .emailNotFound)
    }

    /// Whether `createAuthUri` may list an email's sign-in methods (never under protection).
    public var listsSignInMethods: Bool { !protectsEmails }

    /// A password reset for an address with no usable account (none, or disabled): the
    /// error to answer, or `nil` to answer as if the message were sent (under protection).
    public func resetRefusal(accountExists: Bool) -> AuthError? {
        protectsEmails ? nil : AuthError(accountExists ? .userDisabled : .emailNotFound)
    }

    /// Whether an email change may answer `EMAIL_EXISTS` for a new address another account
    /// holds (under protection the message is sent, and the change fails when applied).
    public var revealsTakenAddress: Bool { !protectsEmails }

    /// Whether `error`, refusing a `kind` message, must be answered as a success: a reset's
    /// flood refusal would tell a stranger the address has an account.
    public func hides(_ error: AuthError, refusing kind: EmailActionKind) -> Bool {
        protectsEmails && kind == .passwordReset && error == EmailActionPolicy.floodError(kind)
    }
}
