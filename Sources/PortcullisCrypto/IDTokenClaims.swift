import PortcullisCore
public import PortcullisJSON

/// The claims of a Portcullis ID token (DESIGN.md §3), with an open bag of custom claims.
public struct IDTokenClaims: Sendable, Equatable {
    /// `iss`: the tenant's issuer URL.
    public var issuer: String
    /// `aud`: the project id.
    public var audience: String
    /// `sub` = `user_id` = the uid.
    public var subject: String
    /// `iat`, unix seconds.
    public var issuedAt: Int64
    /// `exp`, unix seconds.
    public var expiresAt: Int64
    /// `auth_time`: when the user last signed in (kept across refreshes).
    public var authTime: Int64
    /// `email`.
    public var email: String?
    /// `email_verified` (present whenever `email` is).
    public var emailVerified: Bool?
    /// `name`.
    public var name: String?
    /// `picture`.
    public var picture: String?
    /// `firebase.sign_in_provider`: `password`, `anonymous`, `custom`, a federated provider id.
    public var signInProvider: String
    /// `firebase.identities`: provider id → identifiers.
    public var identities: [String: [String]]
    /// `firebase.tenant`, absent for project users.
    public var tenantId: String?
    /// Developer claims, already validated against the reserved names.
    public var customClaims: [String: JSONValue]

    /// Creates claims.
    public init(
        issuer: String, audience: String, subject: String, issuedAt: Int64, expiresAt: Int64, authTime: Int64,
        email: String? = nil, emailVerified: Bool? = nil, name: String? = nil, picture: String? = nil,
        signInProvider: String, identities: [String: [String]] = [:], tenantId: String? = nil,
        customClaims: [String: JSONValue] = [:]
    ) {
        self.issuer = issuer
        self.audience = audience
        self.subject = subject
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.authTime = authTime
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.picture = picture
        self.signInProvider = signInProvider
        self.identities = identities
        self.tenantId = tenantId
        self.customClaims = customClaims
    }

    static let standardNames: Set<String> = [
        "iss", "aud", "sub", "user_id", "iat", "exp", "auth_time", "email", "email_verified", "name", "picture",
        "firebase",
    ]

    /// The JSON payload. Custom claims come first so a standard claim can never be overwritten.
    public var json: JSONValue {
        var members = customClaims.filter { !Self.standardNames.contains($0.key) && !CustomClaims.reserved.contains($0.key) }
        members["iss"] = .string(issuer)
        members["aud"] = .string(audience)
        members["sub"] = .string(subject)
        members["user_id"] = .string(subject)
        members["iat"] = .integer(issuedAt)
        members["exp"] = .integer(expiresAt)
        members["auth_time"] = .integer(authTime)
        if let email { members["email"] = .string(email) }
        if let emailVerified { members["email_verified"] = .bool(emailVerified) }
        if let name { members["name"] = .string(name) }
        if let picture { members["picture"] = .string(picture) }
        var firebase: [String: JSONValue] = [
            "sign_in_provider": .string(signInProvider),
            "identities": .object(identities.mapValues { .array($0.map(JSONValue.string)) }),
        ]
        if let tenantId { firebase["tenant"] = .string(tenantId) }
        members["firebase"] = .object(firebase)
        return .object(members)
    }

    /// Reads a verified payload; `nil` when a required claim is missing or mistyped.
    public init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        let claims = JWTClaimSet(members)
        guard let issuer = claims.string("iss"), let audience = claims.string("aud"), let subject = claims.string("sub"),
            let issuedAt = claims.numericDate("iat"), let expiresAt = claims.numericDate("exp"),
            let authTime = claims.numericDate("auth_time"), case .object(let firebase)? = members["firebase"],
            case .string(let provider)? = firebase["sign_in_provider"]
        else { return nil }
        let string = claims.string
        var emailVerified: Bool?
        if case .bool(let verified)? = members["email_verified"] { emailVerified = verified }
        var identities: [String: [String]] = [:]
        if case .object(let entries)? = firebase["identities"] {
            for (provider, value) in entries {
                if case .array(let ids) = value {
                    identities[provider] = ids.compactMap { if case .string(let id) = $0 { id } else { nil } }
                }
            }
        }
        var tenant: String?
        if case .string(let id)? = firebase["tenant"] { tenant = id }
        self.init(
            issuer: issuer, audience: audience, subject: subject, issuedAt: issuedAt, expiresAt: expiresAt,
            authTime: authTime, email: string("email"), emailVerified: emailVerified, name: string("name"),
            picture: string("picture"), signInProvider: provider, identities: identities, tenantId: tenant,
            customClaims: members.filter { !Self.standardNames.contains($0.key) })
    }
}
