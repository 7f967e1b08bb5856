/// Decodes `Decodable` values from a parsed ``JSONValue`` the way Google's front end reads
/// request bodies: the one place Identity Toolkit's leniency lives.
///
/// - A key is found under its own spelling, its snake_case one (`id_token` for `idToken`)
///   or its camelCase one; the spelling the type declares wins when a body has two.
/// - Numbers and booleans read as strings; numeric strings read as numbers; `"true"` and
///   `"false"` read as booleans.
/// - `null` reads as absent; unknown members are ignored, unless the decoder is made
///   `rejectingUnknownFields` (admin resource bodies), which refuses a member no decoded
///   type asked for as Google's front end does: `Invalid JSON payload received. Unknown
///   name "…"`.
/// - A value of the wrong type is `INVALID_ARGUMENT` naming the field's path
///   (`Invalid value at 'localId[1]' (TYPE_STRING)`), never a crash.
///
/// A type that declares a ``JSONValue`` property receives the member as it was sent, with
/// its keys untouched: custom claims and other user content are never renamed.
public struct JSONValueDecoder: Sendable {
    /// Whether a member no decoded type asks for is refused rather than ignored.
    public var rejectingUnknownFields: Bool

    /// A decoder, lenient about unknown members unless told otherwise.
    public init(rejectingUnknownFields: Bool = false) {
        self.rejectingUnknownFields = rejectingUnknownFields
    }

    /// Decodes `type` from `value`.
    ///
    /// Throws a ``JSONInputError`` for what is wrong with the document, and passes on what
    /// a type's own `init(from:)` throws (a domain type's rule about a value it read).
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let usage = rejectingUnknownFields ? FieldUsage() : nil
        do {
            let decoded = try ValueDecoder(value: value, codingPath: [], usage: usage).decode(type)
            try usage?.checkEveryMemberWasAskedFor(in: value)
            return decoded
        } catch is DecodingError {
            // Only the standard library's own conformances throw these (a bad enum raw value).
            throw JSONInputError.malformed
        }
    }
}

/// Where a value sits in the document, in Google's notation (`users[0].email`).
public func fieldPath(_ codingPath: [any CodingKey]) -> String {
    var path = ""
    for key in codingPath {
        if let index = key.intValue {
            path += "[\(index)]"
        } else {
            path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
    }
    return path.isEmpty ? "body" : path
}

/// The members each keyed container of one strict decode asked for, by the container's
/// path: what is left over in the body afterwards is an unknown name. Lives for one
/// `decode` call on one task.
private final class FieldUsage {
    private var asked: [String: Set<String>] = [:]

    func open(_ path: String) {
        if asked[path] == nil { asked[path] = [] }
    }

    /// Records the key under every spelling the container would have matched.
    func ask(_ name: String, at path: String) {
        asked[path, default: []].formUnion([name, JSONValue.snakeCase(name), JSONValue.camelCase(name)])
    }

    /// Walks `value` through the objects that were read as keyed containers; a member none
    /// asked for is an unknown name. Objects read whole (a `JSONValue` property) are not entered.
    func checkEveryMemberWasAskedFor(in value: JSONValue, codingPath: [any CodingKey] = []) throws(JSONInputError) {
        switch value {
        case .object(let members):
            let path = fieldPath(codingPath)
            guard let names = asked[path] else { return }
            for name in members.keys.sorted() {
                guard names.contains(name) else { throw JSONInputError.unknownName(name, at: codingPath.isEmpty ? "" : path) }
                if let member = members[name] {
                    // Containers are keyed by the declared (camelCase) names.
                    try checkEveryMemberWasAskedFor(in: member, codingPath: codingPath + [NameKey(JSONValue.camelCase(name))])
                }
            }
        case .array(let items):
            for (index, item) in items.enumerated() {
                try checkEveryMemberWasAskedFor(in: item, codingPath: codingPath + [IndexKey(intValue: index)])
            }
        default:
            return
        }
    }
}

private struct NameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let usage: FieldUsage?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func invalid(_ expected: String) -> JSONInputError { JSONInputError.invalid(path, expected) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch value {
        case .object(let members):
            return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath, usage: usage))
        case .null: return KeyedDecodingContainer(KeyedContainer<Key>(members: [:], codingPath: codingPath, usage: nil))
        default: throw invalid("expected an object")
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw invalid("expected a list") }
        return UnkeyedContainer(items: items, codingPath: codingPath, usage: usage)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self, let value = value as? T { return value }
        return try T(from: self)
    }

    var path: String { fieldPath(codingPath) }
    func decodeString() throws(JSONInputError) -> String { try value.lenientString(at: path) }
    func decodeBool() throws(JSONInputError) -> Bool { try value.lenientBool(at: path) }
    func decodeDouble() throws(JSONInputError) -> Double { try value.lenientDouble(at: path) }
    func decodeInteger<T: FixedWidthInteger>(_ type: T.Type) throws(JSONInputError) -> T { try value.lenientInteger(type, at: path) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]
    let usage: FieldUsage?
    /// This container's path, for `usage` (only built for a strict decode).
    let path: String

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: JSONValue.camelCase($0)) ?? Key(stringValue: $0) } }

    /// Whether any member is spelt in snake_case: most bodies have none, and then an absent
    /// field costs one lookup, not three.
    let hasSnakeCaseMembers: Bool

    init(members: [String: JSONValue], codingPath: [any CodingKey], usage: FieldUsage?) {
        self.members = members
        self.codingPath = codingPath
        self.usage = usage
        path = usage == nil ? "" : fieldPath(codingPath)
        usage?.open(path)
        hasSnakeCaseMembers = members.keys.contains { $0.utf8.contains(UInt8(ascii: "_")) }
    }

    /// The member under the key's own spelling, else its snake_case, else its camelCase one.
    /// A `null` is absent, so it never hides a value sent under another spelling.
    func member(_ key: Key) -> JSONValue? {
        let name = key.stringValue
        usage?.ask(name, at: path)
        if let value = present(name) { return value }
        if hasSnakeCaseMembers {
            let snake = JSONValue.snakeCase(name)
            if snake != name, let value = present(snake) { return value }
        }
        if name.utf8.contains(UInt8(ascii: "_")) { return present(JSONValue.camelCase(name)) }
        return nil
    }

    /// The member spelt `name`, unless it is absent or `null`.
    private func present(_ name: String) -> JSONValue? {
        guard let value = members[name] else { return nil }
        if case .null = value { return nil }
        return value
    }

    func contains(_ key: Key) -> Bool { member(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { (member(key) ?? .null) == .null }

    func decoder(for key: Key) throws -> ValueDecoder {
        guard let value = member(key) else {
            throw JSONInputError.missing(fieldPath(codingPath + [key]))
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key], usage: usage)
    }

    // Leaves read the member in place; the field's path is only built for an error message.
    func leaf(_ key: Key) throws(JSONInputError) -> JSONValue {
        guard let value = member(key) else {
            throw JSONInputError.missing(fieldPath(codingPath + [key]))
        }
        return value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try leaf(key).lenientBool(at: fieldPath(codingPath + [key]))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try leaf(key).lenientString(at: fieldPath(codingPath + [key]))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try leaf(key).lenientDouble(at: fieldPath(codingPath + [key]))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decode(Double.self, forKey: key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    func integer<T: FixedWidthInteger>(_ key: Key) throws(JSONInputError) -> T {
        try leaf(key).lenientInteger(T.self, at: fieldPath(codingPath + [key]))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(for: key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    { try decoder(for: key).container(keyedBy: type) }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(members), codingPath: codingPath, usage: usage) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(for: key) }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    let usage: FieldUsage?
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey], usage: FieldUsage?) {
        self.items = items
        self.codingPath = codingPath
        self.usage = usage
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func next() throws -> ValueDecoder {
        let path = codingPath + [IndexKey(intValue: currentIndex)]
        guard !isAtEnd else { throw JSONInputError.missing(fieldPath(path)) }
        defer { currentIndex += 1 }
        return ValueDecoder(value: items[currentIndex], codingPath: path, usage: usage)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decodeBool() }
    mutating func decode(_ type: String.Type) throws -> String { try next().decodeString() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().decodeDouble() }
    mutating func decode(_ type: Float.Type) throws -> Float { Float(try next().decodeDouble()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().decodeInteger(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().decodeInteger(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().decodeInteger(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().decodeInteger(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().decodeInteger(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().decodeInteger(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().decodeInteger(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().decodeInteger(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().decodeInteger(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().decodeInteger(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    { try next().container(keyedBy: type) }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool() }
    func decode(_ type: String.Type) throws -> String { try decoder.decodeString() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.decodeDouble() }
    func decode(_ type: Float.Type) throws -> Float { Float(try decoder.decodeDouble()) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.decodeInteger(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decodeInteger(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decodeInteger(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decodeInteger(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decodeInteger(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.decodeInteger(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decodeInteger(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decodeInteger(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decodeInteger(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decodeInteger(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
}
