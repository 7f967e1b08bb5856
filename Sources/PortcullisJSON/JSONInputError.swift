/// Why a document could not be read: malformed JSON, a value of the wrong type, a missing or
/// unknown member. Its ``detail`` is in the words Google's front end uses
/// (`Invalid value at 'localId[1]' (TYPE_STRING)`) and names the field by its path; the
/// gateway answers every one of these as 400 `INVALID_ARGUMENT` with that detail.
public struct JSONInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, naming the field.
    public let detail: String

    /// An error with `detail`.
    public init(_ detail: String) {
        self.detail = detail
    }

    public var description: String { detail }

    /// Input that is not JSON, or not UTF-8.
    public static let malformed = JSONInputError("Invalid JSON payload received")

    /// A value of the wrong type at `path` (`expected` in Google's words: `TYPE_STRING`).
    public static func invalid(_ path: String, _ expected: String) -> JSONInputError {
        JSONInputError("Invalid value at '\(path)' (\(expected))")
    }

    /// A required member absent at `path`.
    public static func missing(_ path: String) -> JSONInputError {
        JSONInputError("Missing value at '\(path)'")
    }

    /// A body's member that its resource does not have, in Google's words (`at` names the
    /// enclosing object's path; empty for the body itself).
    public static func unknownName(_ name: String, at path: String) -> JSONInputError {
        JSONInputError("Invalid JSON payload received. Unknown name \"\(name)\"\(path.isEmpty ? "" : " at '\(path)'"): Cannot find field.")
    }
}
