import Foundation
import PortcullisJSON

/// The link an email action sends: Firebase's action-handler shape, served by the
/// gateway's own page, `<public URL>/__/auth/action?mode=…&oobCode=…&apiKey=…&continueUrl=…&lang=…&tenantId=…`.
public enum ActionLink {
    /// The path of the action page.
    public static let path = "/__/auth/action"

    /// Builds the link; absent parts are left out.
    public static func make(
        publicURL: String, kind: EmailActionKind, code: String, apiKey: String?, continueURL: String?,
        languageCode: String?, tenantId: String?
    ) -> String {
        var items: [(String, String)] = [("mode", kind.mode), ("oobCode", code)]
        if let apiKey { items.append(("apiKey", apiKey)) }
        if let continueURL { items.append(("continueUrl", continueURL)) }
        if let languageCode { items.append(("lang", languageCode)) }
        if let tenantId { items.append(("tenantId", tenantId)) }
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        return base + path + "?" + URLEncodedForm.encode(items)
    }
}

/// Where an action may send the user afterwards (`continueUrl`): an http(s) URL on an
/// authorised domain, checked when the code is issued, so the gateway's page never
/// redirects to a host the tenant did not allow (an attacker may request a reset
/// email for someone else's account and choose its continue URL).
///
/// The URL is read as browsers read it (``BrowserURL``), not as RFC 3986 does: the page
/// writes it into a `Location` header, and the host that matters is the one the browser
/// goes to. `https://attacker.example\@localhost/` names `localhost` to `URLComponents`
/// and `attacker.example` to a browser.
public enum ContinueURLPolicy {
    /// The URL to store and later redirect to: the browser's normalised serialisation of
    /// `url`, which is exactly what was checked (the input text itself is never returned).
    ///
    /// - Parameters:
    ///   - url: the request's `continueUrl`.
    ///   - authorizedDomains: the tenant's `authorizedDomains`, in Unicode or `xn--` form.
    ///   - publicURL: the gateway's public URL, whose host is allowed too.
    /// - Returns: `url` as a browser serialises it (`https://APP.example.com:443/a/../b` is
    ///   `https://app.example.com/b`).
    /// - Throws: `INVALID_CONTINUE_URI` when `url` is not an absolute http(s) URL that
    ///   ``BrowserURL`` accepts (over 2048 bytes, another scheme, no host, an IPv6 host, …)
    ///   or when it carries userinfo, even an empty `@`: `https://app.example.com@evil.test/`
    ///   is a trap for the eye, and no continue URL needs credentials.
    ///   `UNAUTHORIZED_DOMAIN` when its host is not `localhost`, the public URL's host or
    ///   one of `authorizedDomains`, or a subdomain of one; names are compared in their
    ///   ASCII (`xn--`) form, an IPv4 address only exactly.
    public static func validate(
        _ url: String, authorizedDomains: [String], publicURL: String
    ) throws(AuthError) -> String {
        guard let parsed = BrowserURL(url), !parsed.hasUserinfo else { throw AuthError(.invalidContinueUri) }
        let allowed = allowedDomains(authorizedDomains: authorizedDomains, publicURL: publicURL).compactMap { BrowserURL.Host($0) }
        guard allowed.contains(where: { parsed.host.isOn($0) }) else {
            throw AuthError(.unauthorizedDomain, detail: "Domain not allowlisted by project")
        }
        return parsed.serialized
    }

    /// The hosts (with their subdomains) continue URLs may name: `localhost`, the public
    /// URL's host, then `authorizedDomains`, each once. `getProjectConfig` reports the same list.
    public static func allowedDomains(authorizedDomains: [String], publicURL: String) -> [String] {
        var domains: [String] = []
        for domain in ["localhost", URLComponents(string: publicURL)?.host?.lowercased()].compactMap({ $0 }) + authorizedDomains
        where !domains.contains(domain) {
            domains.append(domain)
        }
        return domains
    }
}

extension BrowserURL.Host {
    /// Whether this host is `allowed` or, for domains, a subdomain of it (`a.app.example.com`
    /// is on `app.example.com`; `evil-app.example.com` is not).
    fileprivate func isOn(_ allowed: BrowserURL.Host) -> Bool {
        guard case .domain(let name) = self, case .domain(let allowedName) = allowed else { return self == allowed }
        return name == allowedName || name.hasSuffix("." + allowedName)
    }
}
