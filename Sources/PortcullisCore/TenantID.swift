/// Rules for tenant identifiers.
///
/// Generated like Identity Platform's: a slug of the display name and five
/// random characters (`acme-x7k2p`). Paths carrying anything else are refused
/// before storage is asked.
public enum TenantID {
    /// The longest accepted tenant id.
    public static let maximumLength = 128

    /// Whether `id` can name a tenant: 1–128 letters, digits and hyphens.
    public static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maximumLength
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D
            }
    }

    /// A new id derived from a display name.
    public static func generate(
        displayName: String?, using generator: inout some RandomNumberGenerator
    ) -> String {
        let mapped = String(
            (displayName ?? "").lowercased().map { character -> Character in
                character.isASCII && (character.isLetter || character.isNumber) ? character : "-"
            })
        let slug = mapped.split(separator: "-").joined(separator: "-")
        let prefix = slug.isEmpty ? "tenant" : String(slug.prefix(20))
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let suffix = String((0..<5).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        return "\(prefix.hasSuffix("-") ? String(prefix.dropLast()) : prefix)-\(suffix)"
    }

    /// A new id from the system's random source.
    public static func generate(displayName: String?) -> String {
        var generator = SystemRandomNumberGenerator()
        return generate(displayName: displayName, using: &generator)
    }
}
