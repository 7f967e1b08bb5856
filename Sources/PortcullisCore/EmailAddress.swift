import Foundation

/// Email address rules (RFC 5322 is far looser; this is what Firebase accepts in practice).
public enum EmailAddress {
    /// `INVALID_EMAIL` unless `text` looks like `local@domain.tld`; returns it trimmed and in
    /// lower case, the form it is stored, compared and returned in (as Firebase does).
    public static func validate(_ text: String) throws(AuthError) -> String {
        let email = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, email.utf8.count <= 254,
            let domain = parts.last, domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."),
            !email.contains(where: { $0.isWhitespace || $0 == "\u{0}" || $0 == "," || $0 == ";" })
        else { throw AuthError(.invalidEmail) }
        return email
    }
}
