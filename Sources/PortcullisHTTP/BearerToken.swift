/// `Authorization: Bearer <token>`, read on UTF-8 bytes: `String.count` and
/// character slicing walk grapheme clusters, which a 1 KB token on every
/// forward-auth request cannot afford.
enum BearerToken {
    /// The token after a case-insensitive `Bearer `, or `nil`.
    static func parse(_ header: String?) -> String? {
        guard let header else { return nil }
        let utf8 = header.utf8
        guard utf8.count > 7 else { return nil }
        let scheme = utf8.prefix(7).map { $0 | 0x20 }  // ASCII lowercase; the space (0x20) is unchanged
        guard scheme.elementsEqual("bearer ".utf8) else { return nil }
        return String(header.utf8.dropFirst(7))
    }
}
