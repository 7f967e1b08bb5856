public import PortcullisJSON

/// A change to a stored user: only the fields set here are written.
///
/// Updates never write a user back whole: a profile edit that read the row before
/// a concurrent disable or password change would otherwise undo it. Storage turns
/// each set field into its own column assignment in one statement, and leaves
/// every other column as the database holds it at that moment.
public struct UserUpdate: Sendable, Equatable {
    /// New email (already validated, lower case); `.some(nil)` removes it.
    public var email: String??
    /// New verified flag. When unset, a change of email clears it.
    public var emailVerified: Bool?
    /// New display name; `.some(nil)` clears it.
    public var displayName: String??
    /// New photo URL; `.some(nil)` clears it.
    public var photoURL: String??
    /// New disabled flag.
    public var disabled: Bool?
    /// New custom claims (already validated).
    public var customAttributes: [String: JSONValue]?
    /// A new password hash (made by the caller; storage never sees the password);
    /// `.some(nil)` removes the password (unlinking `password`, a takeover).
    public var passwordHash: String??
    /// When the new password was set (`passwordUpdatedAt`); ``UserUpdatePolicy`` fills it in.
    public var passwordSetAt: Timestamp?
    /// What happens to the revocation watermark.
    public var revocation: Revocation?

    /// How an update moves `validSince`.
    public enum Revocation: Sendable, Equatable {
        /// End every session started so far, and every token minted in the same second:
        /// the watermark becomes the start of the next whole second
        /// (``SessionPolicy/revocationWatermark(now:validSince:lastSignIn:)``).
        case now(Timestamp)
        /// An admin's explicit watermark (`validSince`), taken as given.
        case at(Timestamp)
    }

    /// An empty update.
    public init(
        email: String?? = nil, emailVerified: Bool? = nil, displayName: String?? = nil, photoURL: String?? = nil,
        disabled: Bool? = nil, customAttributes: [String: JSONValue]? = nil, passwordHash: String? = nil,
        revocation: Revocation? = nil
    ) {
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.disabled = disabled
        self.customAttributes = customAttributes
        self.passwordHash = passwordHash.map { .some($0) }
        self.revocation = revocation
    }

    /// Whether the update sets a new password (rather than leaving or removing it).
    public var setsPassword: Bool {
        if case .some(.some) = passwordHash { return true }
        return false
    }

    /// Whether the update changes what other instances cache for `checkRevoked`.
    public var changesRevocationState: Bool { revocation != nil || disabled != nil }

    /// Whether the update touches what the `password` provider link follows.
    public var changesPasswordLink: Bool { email != nil || passwordHash != nil }
}

/// What changing a user implies (DESIGN.md §1): the revocations each credential
/// change and admin action carries.
public enum UserUpdatePolicy {
    /// Applies the implied revocation to `update`, made at `now`.
    ///
    /// - A new password or email ends every earlier session (`validSince = now`); the
    ///   caller gets fresh tokens, issued after the change.
    /// - Disabling a user ends every session too; enabling one revokes nothing.
    /// - An explicit admin `validSince` is taken as given, and wins over the others.
    public static func applyImplications(to update: inout UserUpdate, now: Timestamp) {
        if update.setsPassword { update.passwordSetAt = now }
        if case .at = update.revocation { return }
        let credentialChanged = update.email != nil || update.setsPassword
        if credentialChanged || update.disabled == true {
            update.revocation = .now(now)
        }
    }

    /// What a federated sign-in that `AccountLinking` linked to the account with its email
    /// writes to that account, at `now`.
    ///
    /// A link marks the email verified when the identity proves it. A takeover
    /// (`replace`) does too, removes the unproven password when the decision says so,
    /// overwrites the profile with the identity's and ends every earlier session, so a
    /// squatter who registered the address first keeps nothing (DESIGN.md §1, case 3).
    /// The providers the decision unlinks are removed beside this update.
    public static func linking(
        _ decision: AccountLinking.Decision, provesEmail: Bool, displayName: String?, photoURL: String?, now: Timestamp
    ) -> UserUpdate {
        var update = UserUpdate(emailVerified: provesEmail ? true : nil)
        guard case .replace(_, let removePassword) = decision else { return update }
        update.displayName = .some(displayName)
        update.photoURL = .some(photoURL)
        if removePassword { update.passwordHash = .some(nil) }
        update.revocation = .now(now)
        return update
    }
}
