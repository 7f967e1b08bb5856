import ExtrasBase64

/// Base64url without padding (RFC 4648 §5), as JWTs and opaque tokens use.
///
/// swift-extras-base64 does the work (7 × the hand-rolled decoder this replaced, on a
/// token's 550-byte payload: BENCHMARKS.md); this adds what tokens need on top: padding
/// tolerated on input, and only the canonical encoding of each byte string accepted.
public enum Base64URL {
    /// Encodes bytes.
    public static func encode(_ input: [UInt8]) -> String {
        Base64.encodeToString(bytes: input, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Decodes unpadded base64url (trailing `=` padding is accepted); `nil` when it is not base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        decode(utf8: Array(text.utf8)[...])
    }

    /// Decodes base64url given as UTF-8 bytes (no intermediate string on hot paths).
    public static func decode(utf8 text: ArraySlice<UInt8>) -> [UInt8]? {
        var input = text
        while input.last == UInt8(ascii: "=") { input.removeLast() }
        // Padding only at the end (the decoder reads a `=` inside as the end of the data).
        guard hasCanonicalEnd(input), !input.contains(UInt8(ascii: "=")) else { return nil }
        return try? Base64.decode(bytes: input, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Whether the bits the last character carries beyond the final byte are zero: otherwise
    /// several strings would decode to the same bytes, and a token could be altered unseen.
    private static func hasCanonicalEnd(_ input: ArraySlice<UInt8>) -> Bool {
        guard let last = input.last else { return true }
        let unusedBits: UInt8
        switch input.count % 4 {
        case 2: unusedBits = 0x0F
        case 3: unusedBits = 0x03
        default: return true
        }
        let value: UInt8
        switch last {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = last - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): value = last - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = last - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): value = 62
        case UInt8(ascii: "_"): value = 63
        default: return false
        }
        return value & unusedBits == 0
    }

    /// Decodes binary fields of imported data, which arrive in either alphabet: standard
    /// base64 (`firebase auth:export`) or base64url (the Admin SDKs), padded or not.
    public static func decodeEitherAlphabet(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8).filter { $0 != UInt8(ascii: "=") }
        let url = input.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            default: byte
            }
        }
        return try? Base64.decode(bytes: url, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }
}
