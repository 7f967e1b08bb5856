/// `application/x-www-form-urlencoded` bodies, decoded on bytes.
enum FormBody {
    /// The fields of `bytes` (`+` is a space, `%XX` a byte; a later duplicate wins);
    /// `nil` for a bad escape or a result that is not UTF-8.
    static func parse(_ bytes: [UInt8]) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in bytes.split(separator: UInt8(ascii: "&")) {
            let separator = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            guard let key = decode(pair[..<separator]),
                let value = separator == pair.endIndex ? "" : decode(pair[(separator + 1)...])
            else { return nil }
            fields[key] = value
        }
        return fields
    }

    private static func decode(_ part: ArraySlice<UInt8>) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(part.count)
        var index = part.startIndex
        while index < part.endIndex {
            let byte = part[index]
            switch byte {
            case UInt8(ascii: "+"):
                output.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index + 2 < part.endIndex, let high = hexValue(part[index + 1]), let low = hexValue(part[index + 2])
                else { return nil }
                output.append(high << 4 | low)
                index += 2
            default:
                output.append(byte)
            }
            index += 1
        }
        return String(validating: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
