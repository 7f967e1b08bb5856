/// What a federated sign-in does when its email already belongs to an account of the
/// tenant (DESIGN.md §1, "Automatic linking").
///
/// The decision turns on one question for each side: does it *prove* the address? The
/// account does when its email is verified (a completed verification, or a trusted
/// provider linked earlier); the incoming sign-in does when its provider is trusted for
/// the address and does not deny it (``EmailTrust/isVerified(providerId:email:claim:directory:tenantDomains:)``).
///
/// | account proves it | sign-in proves it | outcome |
/// |---|---|---|
/// | no (untrusted links) | no (untrusted) | ``Decision/needConfirmation`` (case 1) |
/// | yes (trusted links) | no (untrusted) | ``Decision/needConfirmation`` (case 2) |
/// | no | yes | ``Decision/replace(unlinking:removePassword:)`` (case 3) |
/// | yes | yes | ``Decision/link`` (case 4) |
///
/// Case 3 is the squatter rule: whoever registered the address first without proving it
/// (an unverified password, an untrusted provider) keeps nothing once its owner signs in
/// through a provider that vouches for it.
public enum AccountLinking {
    /// One provider already linked to the account, with whether it proves the email.
    public struct ExistingProvider: Sendable, Equatable {
        /// `password`, `google.com`, …
        public var providerId: String
        /// Whether this provider vouches for the account's email (for `password`: the
        /// email is verified).
        public var provesEmail: Bool

        /// Creates an entry.
        public init(providerId: String, provesEmail: Bool) {
            self.providerId = providerId
            self.provesEmail = provesEmail
        }
    }

    /// The outcome.
    public enum Decision: Sendable, Equatable {
        /// Link the new provider beside the existing ones; the account keeps its profile.
        case link
        /// Link the new provider and mark the email verified, after removing the providers
        /// that never proved the address (and the password, when `removePassword`); the
        /// profile is overwritten from the new provider and every earlier session revoked.
        case replace(unlinking: [String], removePassword: Bool)
        /// Neither side may take the other over: answer `needConfirmation` with the email,
        /// the provider and its identity, and no tokens, so the user signs in with an
        /// existing method and links explicitly.
        case needConfirmation
    }

    /// Decides what a sign-in through a new provider does to the account that has its email.
    ///
    /// - Parameters:
    ///   - existing: the account's linked providers.
    ///   - emailVerified: the account's `emailVerified`.
    ///   - incomingProvesEmail: whether the new sign-in's provider vouches for the address.
    public static func decide(existing: [ExistingProvider], emailVerified: Bool, incomingProvesEmail: Bool) -> Decision {
        guard incomingProvesEmail else { return .needConfirmation }
        let accountProvesEmail = emailVerified || existing.contains(where: \.provesEmail)
        if accountProvesEmail { return .link }
        let untrusted = existing.filter { !$0.provesEmail }.map(\.providerId)
        return .replace(
            unlinking: Array(Set(untrusted.filter { $0 != ProviderLink.password })).sorted(),
            removePassword: untrusted.contains(ProviderLink.password))
    }

    /// The existing providers of `user` with their trust for its email.
    ///
    /// A federated link proves the account's email only when the provider asserted *that*
    /// address and is trusted for it: a squatter who links their own Gmail identity to an
    /// account registered under the victim's address (or changes the account's email after
    /// linking) must not make the account look proven. A Microsoft link never does, since
    /// its directory is not kept (``EmailTrust/isTrusted(providerId:email:directory:tenantDomains:)``).
    public static func existingProviders(
        of user: User, tenantDomains: [TenantSettings.TrustedEmailDomain]
    ) -> [ExistingProvider] {
        guard let email = user.email else { return [] }
        return user.providers.map { link in
            let proves =
                link.providerId == ProviderLink.password
                ? user.emailVerified
                : link.email?.lowercased() == email.lowercased()
                    && EmailTrust.isTrusted(providerId: link.providerId, email: email, tenantDomains: tenantDomains)
            return ExistingProvider(providerId: link.providerId, provesEmail: proves)
        }
    }

    /// Whether removing `providerIds` from `user` would leave it without any way to sign in.
    ///
    /// The password counts as a way in only while the account has an email for it.
    public static func wouldRemoveLastSignInMethod(_ user: User, removing providerIds: Set<String>) -> Bool {
        let remaining = user.providers.filter { !providerIds.contains($0.providerId) }
        return !user.providers.isEmpty && remaining.isEmpty
    }
}
