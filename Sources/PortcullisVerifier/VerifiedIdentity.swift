public import Foundation

/// Who a verified ID token speaks for: the user, their tenant and the token's claims.
public struct VerifiedIdentity: Sendable, Hashable {
    /// The user's id (`sub`).
    public var uid: String
    /// The user's tenant (`firebase.tenant`); `nil` for the project's own users.
    public var tenantId: String?
    /// The user's email (`email`), when they have one.
    public var email: String?
    /// Whether the email is verified (`email_verified`; `false` when absent).
    public var emailVerified: Bool
    /// The user's display name (`name`).
    public var name: String?
    /// The user's photo URL (`picture`).
    public var picture: String?
    /// How the session was started (`firebase.sign_in_provider`): `password`, `anonymous`,
    /// `custom`, `google.com`, …
    public var signInProvider: String
    /// The user's linked identities by provider (`firebase.identities`), e.g.
    /// `["email": ["a@example.com"]]`.
    public var identities: [String: JSONValue]
    /// When the user signed in (`auth_time`): refreshing keeps it, signing in again renews it.
    public var authTime: Date
    /// When the token was issued (`iat`).
    public var issuedAt: Date
    /// When the token expires (`exp`).
    public var expiresAt: Date
    /// The token's issuer (`iss`).
    public var issuer: String
    /// The custom claims: every claim of the payload that is neither a registered JWT claim
    /// nor one of Firebase's (`iss aud sub user_id iat exp auth_time nbf email email_verified
    /// phone_number name picture firebase` and the reserved `acr amr at_hash azp cnf c_hash
    /// jti nonce`), as JSON values.
    public var customClaims: [String: JSONValue]

    /// An identity from its parts (the verifier makes them; this is for tests of code that
    /// consumes identities).
    public init(
        uid: String, tenantId: String?, email: String?, emailVerified: Bool, name: String? = nil, picture: String? = nil,
        signInProvider: String, identities: [String: JSONValue] = [:], authTime: Date, issuedAt: Date, expiresAt: Date,
        issuer: String, customClaims: [String: JSONValue] = [:]
    ) {
        self.uid = uid
        self.tenantId = tenantId
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.picture = picture
        self.signInProvider = signInProvider
        self.identities = identities
        self.authTime = authTime
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.issuer = issuer
        self.customClaims = customClaims
    }
}
