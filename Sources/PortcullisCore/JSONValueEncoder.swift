/// Encodes `Encodable` values as a ``JSONValue``, for response bodies and stored documents.
///
/// `nil` optionals are left out (Identity Toolkit omits absent fields rather than sending
/// `null`); a ``JSONValue`` property is written as it is. Serialise the result with
/// ``JSONValue/serializedBytes()``: compact, keys sorted.
public struct JSONValueEncoder: Sendable {
    /// An encoder.
    public init() {}

    /// The value as a JSON document.
    public func encode(_ value: some Encodable) throws -> JSONValue {
        let root = EncodingNode()
        try root.encode(value)
        return root.value
    }
}

/// One value being encoded: containers write into it, and nested containers into its children.
///
/// A reference type because `Encoder`'s containers are handed out and written to later.
private final class EncodingNode: Encoder {
    enum Content {
        case empty
        case value(JSONValue)
        case object([String: EncodingNode])
        case array([EncodingNode])
    }

    var content = Content.empty
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(codingPath: [any CodingKey] = []) { self.codingPath = codingPath }

    var value: JSONValue {
        switch content {
        case .empty: .object([:])
        case .value(let value): value
        case .object(let members): .object(members.mapValues(\.value))
        case .array(let items): .array(items.map(\.value))
        }
    }

    func encode<T: Encodable>(_ value: T) throws {
        if let json = value as? JSONValue {
            content = .value(json)
        } else {
            try value.encode(to: self)
        }
    }

    func child(_ key: String, codingKey: any CodingKey) -> EncodingNode {
        var members: [String: EncodingNode] = [:]
        if case .object(let existing) = content { members = existing }
        let node = EncodingNode(codingPath: codingPath + [codingKey])
        members[key] = node
        content = .object(members)
        return node
    }

    func appended() -> EncodingNode {
        var items: [EncodingNode] = []
        if case .array(let existing) = content { items = existing }
        let node = EncodingNode(codingPath: codingPath)
        items.append(node)
        content = .array(items)
        return node
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = content {} else { content = .object([:]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(node: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = content {} else { content = .array([]) }
        return UnkeyedContainer(node: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(node: self) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    var codingPath: [any CodingKey] { node.codingPath }

    func set(_ value: JSONValue, _ key: Key) { node.child(key.stringValue, codingKey: key).content = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.integer(Int64(clamping: value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.integer(Int64(clamping: value)), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try node.child(key.stringValue, codingKey: key).encode(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    )
        -> KeyedEncodingContainer<NestedKey>
    { node.child(key.stringValue, codingKey: key).container(keyedBy: keyType) }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        node.child(key.stringValue, codingKey: key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { node }
    mutating func superEncoder(forKey key: Key) -> any Encoder { node.child(key.stringValue, codingKey: key) }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int {
        if case .array(let items) = node.content { return items.count }
        return 0
    }

    func append(_ value: JSONValue) { node.appended().content = .value(value) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.integer(value)) }
    mutating func encode(_ value: UInt) throws { append(.integer(Int64(clamping: value))) }
    mutating func encode(_ value: UInt8) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(.integer(Int64(clamping: value))) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.appended().encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        node.appended().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { node.appended().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { node.appended() }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let node: EncodingNode
    var codingPath: [any CodingKey] { node.codingPath }

    mutating func encodeNil() throws { node.content = .value(.null) }
    mutating func encode(_ value: Bool) throws { node.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { node.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { node.content = .value(.double(value)) }
    mutating func encode(_ value: Float) throws { node.content = .value(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.content = .value(.integer(value)) }
    mutating func encode(_ value: UInt) throws { node.content = .value(.integer(Int64(clamping: value))) }
    mutating func encode(_ value: UInt8) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { node.content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { node.content = .value(.integer(Int64(clamping: value))) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.encode(value) }
}
