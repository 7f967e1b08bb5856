import PortcullisCore
import PortcullisJSON

/// The field names an admin resource's body may carry, checked before the body is read.
///
/// Google's front end parses a resource body against the resource's message and refuses a
/// name the message does not have (`Invalid JSON payload received. Unknown name "…"`):
/// a misspelt switch such as `allowPasswordSigup` must fail, not create a tenant with the
/// switch off. A field Identity Platform has and the gateway does not implement is
/// ``unsupported(_:isInert:)``: accepted while its value asks for nothing, refused by name
/// otherwise, never ignored.
///
/// Names are matched after camel-casing (`allow_password_signup` is
/// `allowPasswordSignup`), as the resource readers match them; errors name the field as sent.
indirect enum ResourceSchema: Sendable {
    /// A value the resource's reader checks itself: a scalar or a list of scalars.
    case value
    /// A field of Google's resource that a body may echo back (`name`) and the gateway
    /// ignores: accepted, never named by an update mask.
    case ignored
    /// An object whose members are exactly these names.
    case object([String: ResourceSchema])
    /// A list whose items each follow the schema.
    case list(ResourceSchema)
    /// An object whose keys are data (language tags), each value following the schema.
    case map(ResourceSchema)
    /// A field the gateway does not implement (`what` says which behaviour): accepted when
    /// `isInert` holds for its value, so an Admin SDK's explicit "off" passes, and refused
    /// by name otherwise.
    case unsupported(_ what: String, isInert: @Sendable (JSONValue) -> Bool)

    /// Checks `body` against the schema: the first unknown name (depth first, in sorted
    /// order, so the answer is stable) or active unsupported field is `INVALID_ARGUMENT`.
    func check(_ body: JSONValue) throws(AuthError) {
        try check(body, path: "")
    }

    private func check(_ value: JSONValue, path: String) throws(AuthError) {
        switch (self, value) {
        case (.object(let fields), .object(let members)):
            for name in members.keys.sorted() {
                guard let field = fields[JSONValue.camelCase(name)] else { throw AuthError(JSONInputError.unknownName(name, at: path)) }
                guard let member = members[name], member != .null else { continue }
                try field.check(member, path: path.isEmpty ? name : "\(path).\(name)")
            }
        case (.list(let item), .array(let items)):
            for (index, element) in items.enumerated() {
                try item.check(element, path: "\(path)[\(index)]")
            }
        case (.map(let entry), .object(let members)):
            for name in members.keys.sorted() {
                guard let member = members[name], member != .null else { continue }
                try entry.check(member, path: "\(path).\(name)")
            }
        case (.unsupported(let what, let isInert), _):
            guard isInert(value.camelCasedKeys()) else { throw AuthError.unsupported(path, what) }
        case (.value, _), (.ignored, _):
            return
        default:
            // A wrong type: the resource's reader names it with the type it expected.
            return
        }
    }

    /// Whether an `updateMask` may name `path` (camel-cased components): a field of an
    /// object, down to lists, maps and leaves, or anything inside an unsupported field
    /// (the Admin SDKs mask `mfaConfig.state` when they turn multi-factor off).
    func allowsMask(_ path: ArraySlice<String>) -> Bool {
        guard let first = path.first else { return true }
        switch self {
        case .object(let fields):
            guard let field = fields[first] else { return false }
            if case .ignored = field { return false }
            return field.allowsMask(path.dropFirst())
        case .unsupported: return true
        case .value, .ignored, .list, .map: return false
        }
    }
}

extension AuthError {
    /// A field that asks for behaviour Portcullis does not have (`feature`).
    static func unsupported(_ path: String, _ feature: String) -> AuthError {
        AuthError(.invalidArgument, detail: "\(path): Portcullis does not support \(feature)")
    }
}

extension ResourceSchema {
    /// The states Identity Platform uses for "off": a value of one of these asks for nothing.
    private static let offStates: Set<String> = ["OFF", "DISABLED", "STATE_UNSPECIFIED", ""]

    /// Whether `value` is absent, empty, `false` or an off state: a switch left off.
    static func isOff(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?: true
        case .bool(let flag)?: !flag
        case .string(let state)?: offStates.contains(state) || state.hasSuffix("_UNSPECIFIED")
        case .array(let items)?: items.isEmpty
        case .object(let members)?: members.isEmpty
        default: false
        }
    }
}
