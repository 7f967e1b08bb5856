/// Which identity providers vouch for which email addresses (DESIGN.md §1).
///
/// A *trusted* provider is the authority for an address: Google for Gmail, Yahoo for
/// Yahoo Mail, Microsoft for Outlook and Hotmail, Apple for every address it relays or
/// confirms, and whatever (provider, domain) pairs a tenant adds (its Workspace domain,
/// say). Every other pairing is untrusted: GitHub, Facebook and Twitter for anything,
/// Google for a domain it does not host.
public enum EmailTrust {
    /// The built-in trust table: provider → the domains it is the authority for.
    public static let builtIn: [String: Set<String>] = [
        "google.com": ["gmail.com", "googlemail.com"],
        "yahoo.com": ["yahoo.com"],
        "microsoft.com": ["outlook.com", "hotmail.com"],
    ]

    /// Providers trusted for every address: Apple confirms each email it hands out.
    public static let trustedForEveryDomain: Set<String> = ["apple.com"]

    /// Whether `providerId` is trusted for `email`'s domain, by the built-in table or by
    /// one of the tenant's `trustedEmailDomains`.
    public static func isTrusted(
        providerId: String, email: String, tenantDomains: [TenantSettings.TrustedEmailDomain] = []
    ) -> Bool {
        guard let domain = domain(of: email), !domain.isEmpty else { return false }
        if trustedForEveryDomain.contains(providerId) || builtIn[providerId]?.contains(domain) == true { return true }
        return tenantDomains.contains { $0.providerId == providerId && $0.domain.lowercased() == domain }
    }

    /// Microsoft's directory of personal accounts (`tid` of Outlook.com and Hotmail users).
    /// Any organisation's Entra directory can put any address in a token's `email`, so
    /// Microsoft vouches for `@outlook.com` and `@hotmail.com` only from this one.
    public static let microsoftConsumerDirectory = "9188040d-6c67-4c5b-b112-36a304b66dad"

    /// Whether a verified federated identity proves its email: its provider is trusted for
    /// the address and does not deny it; Microsoft's built-in domains only from its
    /// consumer directory; never an identity resolved from an access token (which any app
    /// the user granted it to could present, so it says nothing about who is signing in here).
    public static func provesEmail(
        _ identity: FederatedIdentity, tenantDomains: [TenantSettings.TrustedEmailDomain] = []
    ) -> Bool {
        guard let email = identity.email, !identity.fromAccessToken else { return false }
        if identity.providerId == "microsoft.com", builtIn["microsoft.com"]?.contains(domain(of: email) ?? "") == true,
            identity.rawUserInfo.value(at: ["tid"]) != .string(microsoftConsumerDirectory)
        {
            return false
        }
        return isVerified(
            providerId: identity.providerId, email: email, claim: identity.emailVerifiedClaim, tenantDomains: tenantDomains)
    }

    private static func domain(of email: String) -> String? {
        guard let at = email.lastIndex(of: "@") else { return nil }
        return email[email.index(after: at)...].lowercased()
    }

    /// Whether the email a provider asserts counts as verified: a trusted provider's does
    /// unless its token says `email_verified: false`; an untrusted provider's never does,
    /// whatever it claims.
    public static func isVerified(
        providerId: String, email: String, claim: Bool?, tenantDomains: [TenantSettings.TrustedEmailDomain] = []
    ) -> Bool {
        claim != false && isTrusted(providerId: providerId, email: email, tenantDomains: tenantDomains)
    }
}
