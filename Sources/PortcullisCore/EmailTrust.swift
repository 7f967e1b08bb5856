import PortcullisJSON

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
    ///
    /// Microsoft is trusted only with the directory (`tid`) that issued the token: any
    /// organisation's Entra directory can put any address in a token's `email` ("nOAuth"),
    /// so Microsoft vouches for `@outlook.com` and `@hotmail.com` only from its consumer
    /// directory, and for a tenant-added domain only from the directories that pair lists
    /// (`tenantIds`). A stored Microsoft link, which keeps no directory, vouches for nothing
    /// afterwards: the account's `emailVerified`, set when the link proved the address,
    /// carries that proof.
    /// - Parameters:
    ///   - providerId: the provider asserting the address.
    ///   - email: the address.
    ///   - directory: Microsoft's `tid` claim of the token asserting it (other providers: unused).
    ///   - tenantDomains: the tenant's own trusted pairs.
    public static func isTrusted(
        providerId: String, email: String, directory: String? = nil, tenantDomains: [TenantSettings.TrustedEmailDomain] = []
    ) -> Bool {
        guard let domain = domain(of: email), !domain.isEmpty else { return false }
        if trustedForEveryDomain.contains(providerId) { return true }
        if providerId == "microsoft.com" {
            guard let directory else { return false }
            if builtIn[providerId]?.contains(domain) == true { return directory == microsoftConsumerDirectory }
            return tenantDomains.contains {
                $0.providerId == providerId && $0.domain.lowercased() == domain && $0.tenantIds.contains(directory.lowercased())
            }
        }
        if builtIn[providerId]?.contains(domain) == true { return true }
        return tenantDomains.contains { $0.providerId == providerId && $0.domain.lowercased() == domain }
    }

    /// Microsoft's directory of personal accounts (`tid` of Outlook.com and Hotmail users).
    public static let microsoftConsumerDirectory = "9188040d-6c67-4c5b-b112-36a304b66dad"

    /// Whether a verified federated identity proves its email: its provider is trusted for
    /// the address (Microsoft: from the token's directory) and does not deny it; never an
    /// identity resolved from an access token (which any app the user granted it to could
    /// present, so it says nothing about who is signing in here).
    public static func provesEmail(
        _ identity: FederatedIdentity, tenantDomains: [TenantSettings.TrustedEmailDomain] = []
    ) -> Bool {
        guard let email = identity.email, !identity.fromAccessToken else { return false }
        var directory: String?
        if case .string(let tid)? = identity.rawUserInfo.value(at: ["tid"]) { directory = tid }
        return isVerified(
            providerId: identity.providerId, email: email, claim: identity.emailVerifiedClaim, directory: directory,
            tenantDomains: tenantDomains)
    }

    private static func domain(of email: String) -> String? {
        guard let at = email.lastIndex(of: "@") else { return nil }
        return email[email.index(after: at)...].lowercased()
    }

    /// Whether the email a provider asserts counts as verified: a trusted provider's does
    /// unless its token says `email_verified: false`; an untrusted provider's never does,
    /// whatever it claims.
    public static func isVerified(
        providerId: String, email: String, claim: Bool?, directory: String? = nil,
        tenantDomains: [TenantSettings.TrustedEmailDomain] = []
    ) -> Bool {
        claim != false && isTrusted(providerId: providerId, email: email, directory: directory, tenantDomains: tenantDomains)
    }
}
