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

/// One value being encoded: containers write into it, nested containers into child nodes.
///
/// A reference type because `Encoder`'s containers are handed out and written to later.
/// Scalars are stored in place (no node per field), members and items are mutated in
/// place, and the coding path is only assembled when someone asks for it.
private final class EncodingNode: Encoder {
    enum Slot {
        case value(JSONValue)
        case node(EncodingNode)

        var value: JSONValue {
            switch self {
            case .value(let value): value
            case .node(let node): node.value
            }
        }
    }

    enum Shape { case empty, single, object, array }

    var shape = Shape.empty
    var single = JSONValue.null
    var members: [String: Slot] = [:]
    var items: [Slot] = []
    /// Unowned: the parent holds its children (`members`, `items`), so a strong reference back
    /// would be a cycle, and every nested document encoded would stay in memory for good (a
    /// page of `accounts:batchGet` kept ~1 MB). A parent outlives its children's use: nodes are
    /// written only while ``JSONValueEncoder/encode(_:)`` holds the root.
    private unowned let parent: EncodingNode?
    private let key: (any CodingKey)?

    init(parent: EncodingNode? = nil, key: (any CodingKey)? = nil) {
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        guard let parent else { return [] }
        return parent.codingPath + (key.map { [$0] } ?? [])
    }

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var value: JSONValue {
        switch shape {
        case .empty: .object([:])
        case .single: single
        case .object: .object(members.mapValues(\.value))
        case .array: .array(items.map(\.value))
        }
    }

    func set(_ value: JSONValue) {
        shape = .single
        single = value
    }

    func encode<T: Encodable>(_ value: T) throws {
        if let json = value as? JSONValue {
            set(json)
        } else {
            try value.encode(to: self)
        }
    }

    /// A node for a member that is not a scalar.
    func child(_ key: any CodingKey) -> EncodingNode {
        let node = EncodingNode(parent: self, key: key)
        members[key.stringValue] = .node(node)
        return node
    }

    /// A node for an item that is not a scalar.
    func appended() -> EncodingNode {
        let node = EncodingNode(parent: self, key: nil)
        items.append(.node(node))
        return node
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        shape = .object
        return KeyedEncodingContainer(KeyedContainer<Key>(node: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        shape = .array
        return UnkeyedContainer(node: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(node: self) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    var codingPath: [any CodingKey] { node.codingPath }

    func set(_ value: JSONValue, _ key: Key) { node.members[key.stringValue] = .value(value) }

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
        if let json = value as? JSONValue {
            set(json, key)
        } else {
            try node.child(key).encode(value)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    )
        -> KeyedEncodingContainer<NestedKey>
    { node.child(key).container(keyedBy: keyType) }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        node.child(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { node }
    mutating func superEncoder(forKey key: Key) -> any Encoder { node.child(key) }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int { node.items.count }

    func append(_ value: JSONValue) { node.items.append(.value(value)) }

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
    mutating func encode<T: Encodable>(_ value: T) throws {
        if let json = value as? JSONValue {
            append(json)
        } else {
            try node.appended().encode(value)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        node.appended().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { node.appended().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { node.appended() }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let node: EncodingNode
    var codingPath: [any CodingKey] { node.codingPath }

    mutating func encodeNil() throws { node.set(.null) }
    mutating func encode(_ value: Bool) throws { node.set(.bool(value)) }
    mutating func encode(_ value: String) throws { node.set(.string(value)) }
    mutating func encode(_ value: Double) throws { node.set(.double(value)) }
    mutating func encode(_ value: Float) throws { node.set(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { node.set(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.set(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.set(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.set(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.set(.integer(value)) }
    mutating func encode(_ value: UInt) throws { node.set(.integer(Int64(clamping: value))) }
    mutating func encode(_ value: UInt8) throws { node.set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { node.set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { node.set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { node.set(.integer(Int64(clamping: value))) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.encode(value) }
}
