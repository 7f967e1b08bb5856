public import PortcullisJSON

/// Custom claims a developer may put into ID tokens.
public enum CustomClaims {
    /// Names Firebase reserves; a custom claim may not use them.
    public static let reserved: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "firebase", "iat", "iss", "jti",
        "nbf", "nonce", "sub",
    ]

    /// The largest serialized size, in bytes.
    public static let maximumBytes = 1000

    /// `FORBIDDEN_CLAIM : <name>` for a reserved name, `CLAIMS_TOO_LARGE` over 1000 bytes.
    public static func validate(_ claims: [String: JSONValue]) throws(AuthError) {
        if let name = claims.keys.sorted().first(where: reserved.contains) {
            throw AuthError(.forbiddenClaim, detail: name)
        }
        guard JSONValue.object(claims).serializedBytes().count <= maximumBytes else {
            throw AuthError(.claimsTooLarge)
        }
    }

    /// Parses the Admin API's `customAttributes` string (a JSON object) and validates it;
    /// anything but a JSON object (malformed JSON too) is `INVALID_CLAIMS`.
    public static func parse(_ text: String) throws(AuthError) -> [String: JSONValue] {
        guard !text.isEmpty else { return [:] }
        guard case .object(let claims)? = try? JSONValue.parse(Array(text.utf8)) else {
            throw AuthError(.invalidClaims)
        }
        try validate(claims)
        return claims
    }
}
