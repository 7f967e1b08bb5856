/// Identity Toolkit's lenient reading of one value, shared by ``JSONValueDecoder`` and
/// ``JSONValue/Reader``: the Admin SDKs send numbers as strings and booleans as text, and
/// a wrong type is `INVALID_ARGUMENT` naming the field, never a crash.
extension JSONValue {
    /// A string; numbers and booleans read as their text. NUL characters are refused:
    /// no field of the API can hold one, and PostgreSQL's text cannot either.
    func lenientString(at path: @autoclosure () -> String) throws(JSONInputError) -> String {
        switch self {
        case .string(let text):
            guard !text.utf8.contains(0) else { throw JSONInputError.invalid(path(), "NUL character") }
            return text
        case .integer(let number): return String(number)
        case .double(let number): return String(number)
        case .bool(let flag): return String(flag)
        default: throw JSONInputError.invalid(path(), "TYPE_STRING")
        }
    }

    /// A boolean; also the strings `"true"` and `"false"`, in any case.
    func lenientBool(at path: @autoclosure () -> String) throws(JSONInputError) -> Bool {
        switch self {
        case .bool(let flag): return flag
        case .string(let text) where text.lowercased() == "true": return true
        case .string(let text) where text.lowercased() == "false": return false
        default: throw JSONInputError.invalid(path(), "TYPE_BOOL")
        }
    }

    /// An integer; also integral doubles and numeric strings (spaces around them allowed).
    func lenientInteger<T: FixedWidthInteger>(_ type: T.Type, at path: @autoclosure () -> String) throws(JSONInputError) -> T {
        let number: T? =
            switch self {
            case .integer(let integer): T(exactly: integer)
            case .double(let double): double.isFinite ? T(exactly: double) : nil
            case .string(let text): T(text.trimmingASCIISpaces())
            default: nil
            }
        guard let number else { throw JSONInputError.invalid(path(), T.isSigned ? "TYPE_INT64" : "TYPE_UINT64") }
        return number
    }

    /// A number; also numeric strings.
    func lenientDouble(at path: @autoclosure () -> String) throws(JSONInputError) -> Double {
        let number: Double? =
            switch self {
            case .integer(let integer): Double(integer)
            case .double(let double): double
            case .string(let text): Double(text.trimmingASCIISpaces())
            default: nil
            }
        guard let number else { throw JSONInputError.invalid(path(), "TYPE_DOUBLE") }
        return number
    }

    /// `id_token` → `idToken`: the spelling a member is matched by.
    public static func camelCase(_ key: String) -> String {
        guard key.contains("_") else { return key }
        var result = ""
        var upperNext = false
        for character in key {
            if character == "_" {
                upperNext = !result.isEmpty
            } else if upperNext {
                result += character.uppercased()
                upperNext = false
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// `idToken` → `id_token`.
    static func snakeCase(_ key: String) -> String {
        guard key.contains(where: \.isUppercase) else { return key }
        var result = ""
        for character in key {
            if character.isUppercase {
                if !result.isEmpty { result.append("_") }
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension String {
    fileprivate func trimmingASCIISpaces() -> Substring {
        let bytes = utf8
        let start = bytes.firstIndex { $0 != UInt8(ascii: " ") } ?? bytes.endIndex
        let end = bytes[start...].lastIndex { $0 != UInt8(ascii: " ") }.map(bytes.index(after:)) ?? start
        return self[start..<end]
    }
}
