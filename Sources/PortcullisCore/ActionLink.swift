import Foundation

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
        return base + path + "?" + items.map { "\($0)=\(percentEncoded($1))" }.joined(separator: "&")
    }

    /// Query-component encoding that leaves only RFC 3986's unreserved characters bare, so
    /// `+`, `&` and `=` inside a continue URL survive every decoder.
    static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }
}

/// Where an action may send the user afterwards (`continueUrl`): an http(s) URL on an
/// authorised domain, checked when the code is issued, so the gateway's page never
/// redirects to a host the tenant did not allow (an attacker may request a reset
/// email for someone else's account and choose its continue URL).
public enum ContinueURLPolicy {
    /// The URL, unchanged, when allowed; `INVALID_CONTINUE_URI` when it is not an absolute
    /// http(s) URL, `UNAUTHORIZED_DOMAIN` when its host is not `localhost`, the public
    /// URL's host, or one of `authorizedDomains` (or a subdomain of one).
    public static func validate(
        _ url: String, authorizedDomains: [String], publicURL: String
    ) throws(AuthError) -> String {
        guard url.utf8.count <= 2048, let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components.host?.lowercased(), !host.isEmpty
        else { throw AuthError(.invalidContinueUri) }
        let allowed = allowedDomains(authorizedDomains: authorizedDomains, publicURL: publicURL)
        guard allowed.contains(where: { host == $0 || host.hasSuffix("." + $0) }) else {
            throw AuthError(.unauthorizedDomain, detail: "Domain not allowlisted by project")
        }
        return url
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

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
