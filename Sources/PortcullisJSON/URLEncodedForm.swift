/// `application/x-www-form-urlencoded`, read as the flat name → value fields the API's forms
/// carry: `/v1/token`'s body, `signInWithIdp`'s `postBody`, the action page's reset form.
///
/// Read on bytes, as the encoding is defined: `&` separates pairs, the first `=` separates a
/// name from its value, `+` is a space and `%XX` a byte. A general form decoder (nested
/// `a[b]` keys, arrays) walks each string as grapheme clusters; on `/v1/token` that was 8 %
/// of the daemon's CPU per refresh (BENCHMARKS.md), for two flat fields.
public enum URLEncodedForm {
    /// `fields` as a form body, each name and value encoded so that only RFC 3986's
    /// unreserved characters stay bare.
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(percentEncoded($0))=\(percentEncoded($1))" }.joined(separator: "&")
    }

    /// Query-component encoding that leaves only RFC 3986's unreserved characters bare, so
    /// `+`, `&` and `=` inside a value survive every decoder.
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

    /// The fields of `body`; when a name repeats, its first value wins, and empty pairs are
    /// skipped. `nil` when an escape is broken or a name or value is not UTF-8.
    public static func fields(_ body: [UInt8]) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { return nil }
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }

    /// One name or value: `+` is a space, `%XX` a byte; `nil` for a broken escape or bytes
    /// that are not UTF-8.
    private static func decode(_ text: ArraySlice<UInt8>) -> String? {
        // Tokens, ids and grant types have nothing to unescape.
        if !text.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) {
            return String(validating: text, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(\.hexDigitValue), let low = iterator.next().flatMap(\.hexDigitValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

}

extension UInt8 {
    /// The value of an ASCII hexadecimal digit (percent-decoding, here and in Core's
    /// `BrowserURL`).
    public var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
