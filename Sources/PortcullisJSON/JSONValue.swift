import Foundation

/// A JSON document as a value, for the lenient reading Google's front end does.
///
/// Requests are parsed into a `JSONValue` first, then read field by field with
/// the accessors of ``JSONValue/Reader``: they accept snake_case keys and
/// numbers where strings are expected (the Admin SDKs send both), and report a
/// wrong type as `INVALID_ARGUMENT` naming the field, never as a crash.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses UTF-8 JSON; malformed input or invalid UTF-8 is `INVALID_ARGUMENT`.
    public static func parse(_ bytes: [UInt8]) throws(JSONInputError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw JSONInputError.malformed
        }
    }

    /// The value serialized as compact JSON with sorted keys (stable output for signatures and tests).
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// ``serialized()`` as UTF-8 bytes, the form signatures and response bodies need.
    public func serializedBytes() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(to: &output)
        return output
    }

    private func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value): output.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let items):
            output.append(UInt8(ascii: "["))
            for (offset, item) in items.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                item.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (offset, key) in members.keys.sorted().enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                members[key]?.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Writes a JSON string literal. Works on UTF-8 bytes: only `"`, `\` and control
    /// characters need escaping, and every byte of a multi-byte character is ≥ 0x80,
    /// so runs of anything else are copied as they are.
    private static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: #"\u00"#.utf8)
                    output.append(hex[Int(byte >> 4)])
                    output.append(hex[Int(byte & 0xF)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The object's members, or `nil` when this is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// A copy whose object keys (recursively) are converted from snake_case to camelCase.
    ///
    /// Only for documents whose keys are field names; never apply it to user
    /// content such as custom claims.
    public func camelCasedKeys() -> JSONValue {
        switch self {
        case .object(let members):
            var out: [String: JSONValue] = [:]
            for (key, value) in members {
                let camel = Self.camelCase(key)
                // An explicit camelCase key wins over its snake_case spelling.
                if out[camel] == nil || camel == key { out[camel] = value.camelCasedKeys() }
            }
            return .object(out)
        case .array(let items):
            return .array(items.map { $0.camelCasedKeys() })
        default:
            return self
        }
    }

    /// The value at a dotted path of object members (`client.permissions`), if any.
    public func value(at path: [String]) -> JSONValue? {
        var current = self
        for component in path {
            guard case .object(let members) = current, let next = members[component] else { return nil }
            current = next
        }
        return current
    }

    /// Sets (or, with `nil`, removes) the value at a dotted path, creating objects on the way.
    public mutating func setValue(_ value: JSONValue?, at path: [String]) {
        guard let first = path.first else {
            self = value ?? .null
            return
        }
        var members = objectValue ?? [:]
        if path.count == 1 {
            members[first] = value
        } else {
            var child = members[first] ?? .object([:])
            child.setValue(value, at: Array(path.dropFirst()))
            members[first] = child
        }
        self = .object(members)
    }
}

extension JSONValue {
    /// Reads the members of a JSON object leniently, naming fields in errors by their full path.
    public struct Reader: Sendable {
        /// The object's members.
        public let members: [String: JSONValue]
        /// The dotted path of this object inside the document, for error details.
        public let path: String

        /// Wraps a value that must be an object (`null` reads as an empty object).
        public init(_ value: JSONValue, path: String = "") throws(JSONInputError) {
            switch value {
            case .object(let members): self.members = members
            case .null: self.members = [:]
            default:
                throw JSONInputError.invalid(path.isEmpty ? "body" : path, "expected an object")
            }
            self.path = path
        }

        func fieldPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

        /// A boolean; accepts `true`/`false` and the strings "true"/"false".
        public func bool(_ key: String) throws(JSONInputError) -> Bool? {
            guard let value = present(key) else { return nil }
            return try value.lenientBool(at: fieldPath(key))
        }

        /// An integer; accepts integral numbers and numeric strings.
        public func int(_ key: String) throws(JSONInputError) -> Int? {
            guard let value = present(key) else { return nil }
            return try value.lenientInteger(Int.self, at: fieldPath(key))
        }

        /// A string; accepts numbers and booleans, rendered as text; refuses NUL characters.
        public func string(_ key: String) throws(JSONInputError) -> String? {
            guard let value = present(key) else { return nil }
            return try value.lenientString(at: fieldPath(key))
        }

        private func present(_ key: String) -> JSONValue? {
            guard let value = members[key], value != .null else { return nil }
            return value
        }

        /// A nested object, or `nil` when absent.
        public func object(_ key: String) throws(JSONInputError) -> Reader? {
            guard let value = members[key], value != .null else { return nil }
            guard case .object = value else { throw JSONInputError.invalid(fieldPath(key), "expected an object") }
            return try Reader(value, path: fieldPath(key))
        }

        /// An array, or `nil` when absent.
        public func array(_ key: String) throws(JSONInputError) -> [JSONValue]? {
            switch members[key] {
            case nil, .null?: return nil
            case .array(let items)?: return items
            default: throw JSONInputError.invalid(fieldPath(key), "expected a list")
            }
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
}
