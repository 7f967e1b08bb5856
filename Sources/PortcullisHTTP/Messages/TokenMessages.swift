import Hummingbird
import PortcullisCore
import PortcullisJSON

/// `POST /v1/token` (securetoken): `grant_type=refresh_token`, form-encoded or JSON.
struct RefreshTokenRequest: Decodable {
    let grantType: String?
    let refreshToken: String?

    // securetoken's own spelling; the JSON decoder also finds the camelCase one.
    private enum CodingKeys: String, CodingKey {
        case grantType = "grant_type"
        case refreshToken = "refresh_token"
    }

    /// The body: JSON when it is a JSON object, else `application/x-www-form-urlencoded`
    /// (`+` is a space, `%XX` a byte), whose fields go through the same lenient decoder.
    static func decode(from request: Request, context: PortcullisRequestContext) async throws -> Self {
        let bytes = try await request.bodyBytes(context: context)
        if bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "{") {
            return try JSONValueDecoder().decode(Self.self, from: JSONValue.parse(bytes))
        }
        guard let fields = URLEncodedForm.fields(bytes) else {
            throw AuthError(.invalidArgument, detail: "Invalid form body")
        }
        return try JSONValueDecoder().decode(Self.self, from: .object(fields.mapValues(JSONValue.string)))
    }
}

/// securetoken's answer, in its snake_case.
struct RefreshTokenResponse: ResponseEncodable {
    let accessToken: String
    let idToken: String
    let refreshToken: String
    /// Seconds, as a string.
    let expiresIn: String
    var tokenType = "Bearer"
    let userId: String
    let projectId: String

    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", idToken = "id_token", refreshToken = "refresh_token"
        case expiresIn = "expires_in", tokenType = "token_type", userId = "user_id", projectId = "project_id"
    }
}
