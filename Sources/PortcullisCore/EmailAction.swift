/// What an email action code is for: `requestType` of `accounts:sendOobCode`.
///
/// A code is bound to one kind, one user and one tenant; applying it for another
/// purpose is `INVALID_OOB_CODE`.
public enum EmailActionKind: String, Sendable, CaseIterable {
    /// Proves the user owns their current email.
    case verifyEmail = "VERIFY_EMAIL"
    /// Sets a new password without the old one.
    case passwordReset = "PASSWORD_RESET"
    /// Changes the email to a new address once that address proves it receives mail.
    case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"

    /// The `mode` of the action link, as Firebase's hosted action handler names it
    /// (`/__/auth/action?mode=resetPassword&oobCode=…`).
    public var mode: String {
        switch self {
        case .verifyEmail: "verifyEmail"
        case .passwordReset: "resetPassword"
        case .verifyAndChangeEmail: "verifyAndChangeEmail"
        }
    }

    /// The kind whose link carries `mode`.
    public init?(mode: String) {
        guard let kind = Self.allCases.first(where: { $0.mode == mode }) else { return nil }
        self = kind
    }

    /// The built-in message, sent when the tenant sets no template of its own.
    var defaultTemplate: EmailTemplate {
        switch self {
        case .verifyEmail:
            EmailTemplate(
                subject: "Verify your email for %APP_NAME%",
                body: """
                    Hello,

                    Follow this link to verify your email address (%EMAIL%):

                    %LINK%

                    If you didn't ask to verify this address, you can ignore this email.
                    """)
        case .passwordReset:
            EmailTemplate(
                subject: "Reset your password for %APP_NAME%",
                body: """
                    Hello,

                    Follow this link to reset the password of your %APP_NAME% account (%EMAIL%):

                    %LINK%

                    If you didn't ask to reset your password, you can ignore this email.
                    """)
        case .verifyAndChangeEmail:
            EmailTemplate(
                subject: "Verify your new email for %APP_NAME%",
                body: """
                    Hello,

                    Follow this link to verify %NEW_EMAIL% and make it the email of your %APP_NAME% account:

                    %LINK%

                    If you didn't ask to change your email, you can ignore this email.
                    """)
        }
    }
}

/// An issued email action code, as stored (the code itself is not: only its hash).
public struct ActionCode: Sendable, Equatable, TenantOwned {
    /// The tenant, `nil` for project users.
    public var tenantId: String?
    /// The user the code acts on.
    public var uid: String
    /// What it is for.
    public var kind: EmailActionKind
    /// The address it was issued for: the account's email, or the new one of an email change.
    public var email: String
    /// Where the action page sends the user afterwards (validated when issued).
    public var continueURL: String?
    /// When it stops working.
    public var expiresAt: Timestamp
    /// When it was issued: never before the user's revocation watermark at that moment, so
    /// a revocation after it (a later watermark) kills it (``EmailActionPolicy``).
    public var issuedAt: Timestamp
    /// The account's email when the code was issued (the old address of an email change):
    /// the code works only while it still is.
    public var accountEmail: String?

    /// A code's record.
    public init(
        tenantId: String?, uid: String, kind: EmailActionKind, email: String, continueURL: String?, expiresAt: Timestamp,
        issuedAt: Timestamp, accountEmail: String?
    ) {
        self.tenantId = tenantId
        self.uid = uid
        self.kind = kind
        self.email = email
        self.continueURL = continueURL
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.accountEmail = accountEmail
    }
}
