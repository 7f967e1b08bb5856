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
        guard let at = email.lastIndex(of: "@") else { return false }
        let domain = email[email.index(after: at)...].lowercased()
        guard !domain.isEmpty else { return false }
        if trustedForEveryDomain.contains(providerId) || builtIn[providerId]?.contains(domain) == true { return true }
        return tenantDomains.contains { $0.providerId == providerId && $0.domain.lowercased() == domain }
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
