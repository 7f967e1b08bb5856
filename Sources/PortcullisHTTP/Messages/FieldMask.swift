import Foundation
import PortcullisCore
import PortcullisJSON

/// A Google `updateMask`: the field paths a PATCH changes.
///
/// Identity Platform semantics: each named path takes the request's value (or
/// its default when the request omits it), every other field keeps its current
/// value, and an empty mask replaces the whole resource.
struct FieldMask: Sendable, Equatable {
    /// The dotted paths, camelCase.
    let paths: [String]

    /// Parses the comma-separated query form (`a,b.c`); snake_case paths are accepted.
    ///
    /// A path the resource's `schema` does not allow is `INVALID_ARGUMENT`.
    init(parsing text: String?, schema: ResourceSchema) throws(AuthError) {
        let raw = (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        var paths: [String] = []
        for path in raw where !path.isEmpty {
            let components = path.split(separator: ".", omittingEmptySubsequences: false).map {
                JSONValue.camelCase(String($0))
            }
            guard !components.contains(""), schema.allowsMask(components[...]) else {
                throw AuthError(.invalidArgument, detail: "Invalid update mask path: \(path)")
            }
            paths.append(components.joined(separator: "."))
        }
        self.paths = paths
    }

    /// Whether the mask names no field (a full replacement).
    var isEmpty: Bool { paths.isEmpty }

    /// Applies `patch` to `current`: the masked paths come from the patch, the rest stays.
    func apply(_ patch: JSONValue, to current: JSONValue) -> JSONValue {
        guard !isEmpty else { return patch }
        var merged = current
        for path in paths {
            let components = path.split(separator: ".").map(String.init)
            merged.setValue(patch.value(at: components), at: components)
        }
        return merged
    }
}
