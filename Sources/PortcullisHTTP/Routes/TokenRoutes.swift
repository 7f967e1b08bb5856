import Hummingbird
import PortcullisAuth
import PortcullisCore

/// `POST /v1/token` (securetoken): `grant_type=refresh_token`, form-encoded or JSON.
struct TokenRoutes {
    let tokens: TokenService

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("token") { request, context in
            let fields = try await Self.fields(of: request, context: context)
            guard let grant = fields["grant_type"] ?? fields["grantType"], !grant.isEmpty else {
                throw AuthError(.invalidGrantType)
            }
            guard grant == "refresh_token" else { throw AuthError(.invalidGrantType) }
            guard let presented = fields["refresh_token"] ?? fields["refreshToken"], !presented.isEmpty else {
                throw AuthError(.missingRefreshToken)
            }
            let (session, user) = try await tokens.refresh(presented)
            return JSONResponse.make(
                .object([
                    "access_token": .string(session.idToken), "id_token": .string(session.idToken),
                    "refresh_token": .string(session.refreshToken), "expires_in": .string(String(session.expiresIn)),
                    "token_type": .string("Bearer"), "user_id": .string(user.uid), "project_id": .string(tokens.projectId),
                ]))
        }
    }

    /// The body's fields: JSON when it is a JSON object, else `application/x-www-form-urlencoded`.
    static func fields(of request: Request, context: PortcullisRequestContext) async throws -> [String: String] {
        let bytes = try await request.bodyBytes(context: context)
        if bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "{") {
            let body = try JSONValue.Reader(JSONValue.parse(bytes))
            var fields: [String: String] = [:]
            for key in body.members.keys { fields[key] = try body.string(key) }
            return fields
        }
        guard let fields = FormBody.parse(bytes) else { throw AuthError(.invalidArgument, detail: "Invalid form body") }
        return fields
    }
}
