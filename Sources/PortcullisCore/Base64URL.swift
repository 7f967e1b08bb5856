/// Base64url without padding (RFC 4648 §5), as JWTs and opaque tokens use.
///
/// Hand-rolled rather than through `Data`'s base64 and string replacements:
/// it runs several times per token on the verification hot path. The entry
/// points take concrete byte arrays: generic ones would run unspecialised
/// across module boundaries, a witness call per byte.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes.
    public static func encode(_ input: [UInt8]) -> String {
        var output = [UInt8]()
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            output.append(alphabet[Int(chunk >> 6 & 63)])
            output.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        let remaining = input.count - index
        if remaining > 0 {
            let chunk = UInt32(input[index]) << 16 | (remaining == 2 ? UInt32(input[index + 1]) << 8 : 0)
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            if remaining == 2 { output.append(alphabet[Int(chunk >> 6 & 63)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes unpadded base64url (trailing `=` padding is accepted); `nil` when it is not base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        decode(utf8: Array(text.utf8)[...])
    }

    /// Decodes base64url given as UTF-8 bytes (no intermediate string on hot paths).
    public static func decode(utf8 text: ArraySlice<UInt8>) -> [UInt8]? {
        var input = text
        while input.last == UInt8(ascii: "=") { input.removeLast() }
        guard input.count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(input.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in input {
            let value = reverse[Int(byte)]
            guard value != 0xFF else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero (canonical encoding).
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
