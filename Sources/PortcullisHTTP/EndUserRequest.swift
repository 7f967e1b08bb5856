import Hummingbird
import PortcullisCore

/// An end-user request body, read leniently (snake_case keys, numbers as strings).
struct EndUserRequest {
    let body: JSONValue.Reader

    init(_ request: Request, context: PortcullisRequestContext) async throws {
        body = try await JSONValue.Reader(request.jsonBody(context: context).camelCasedKeys())
    }

    /// The body's `tenantId` (absent = project users).
    var tenantId: String? {
        get throws(AuthError) {
            guard let id = try body.string("tenantId"), !id.isEmpty else { return nil }
            return id
        }
    }

    func string(_ key: String) throws(AuthError) -> String? { try body.string(key) }
    func bool(_ key: String) throws(AuthError) -> Bool? { try body.bool(key) }
}
