public import PortcullisJSON

/// What a custom token must say once its signature verified (DESIGN.md §3), as a pure
/// decision: the caller found the key, checked the signature, and applies the answer.
///
/// Wire codes, where Firebase is silent or its docs and emulator disagree:
/// - a malformed or out-of-date token (audience, times, `uid`, a mistyped field) is
///   `INVALID_CUSTOM_TOKEN : <what>`, as Identity Toolkit answers a wrong audience or an
///   expired token;
/// - `iss`/`sub` naming another signer than the service account whose key verified the
///   token is `CREDENTIAL_MISMATCH`: in Google the signer named by `iss` decides the project
///   the token is for, and a token for another project is what that code means;
/// - `claims` follow the custom-claim rules with their own codes, as the Firebase emulator
///   answers: `INVALID_CLAIMS` (not an object), `FORBIDDEN_CLAIM : <name>`, `CLAIMS_TOO_LARGE`;
/// - any disagreement about the tenant is `TENANT_ID_MISMATCH`.
public enum CustomTokenPolicy {
    /// The audience every custom token names (Identity Toolkit's service).
    public static let audience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    /// The longest a custom token may live (`exp − iat`).
    public static let maximumLifetimeSeconds: Int64 = 3600
    /// How far in the future `iat` may be (the signer's clock may run ahead).
    public static let allowedClockSkewSeconds: Int64 = 60
    /// The longest uid, as for every user.
    public static let maximumUIDLength = 128

    /// The service account whose key verified the token.
    public struct Signer: Sendable, Equatable {
        /// Its email, which `iss` and `sub` must name.
        public let email: String
        /// Its tenant; `nil` for a project service account.
        public let tenantId: String?

        /// Creates a signer.
        public init(email: String, tenantId: String?) {
            self.email = email
            self.tenantId = tenantId
        }
    }

    /// An accepted token: who signs in, and the claims their ID tokens carry.
    public struct Accepted: Sendable, Equatable {
        /// The uid to sign in (created if new).
        public let uid: String
        /// The token's `claims`, validated; empty when it has none.
        public let developerClaims: [String: JSONValue]
    }

    /// Decides on a verified token's claims.
    ///
    /// - Parameters:
    ///   - claims: the payload, whose signature `signer`'s key verified.
    ///   - signer: that service account.
    ///   - requestTenantId: the request's `tenantId` (`nil`: project users).
    ///   - now: unix seconds.
    public static func accept(
        _ claims: [String: JSONValue], signer: Signer, requestTenantId: String?, now: Int64
    ) throws(AuthError) -> Accepted {
        let claimSet = JWTClaimSet(claims)
        guard claimSet.isAddressed(to: [audience]) else { throw invalid("The custom token has the wrong audience (aud)") }
        guard let issuer = claimSet.string("iss"), let subject = claimSet.string("sub") else {
            throw invalid("iss and sub must name the service account")
        }
        guard issuer == signer.email, subject == signer.email else { throw AuthError(.credentialMismatch) }
        guard let issuedAt = claimSet.numericDate("iat") else { throw invalid("iat must be a time in seconds") }
        guard let expiresAt = claimSet.numericDate("exp") else { throw invalid("exp must be a time in seconds") }
        switch claimSet.lapse(at: now, issueLeeway: allowedClockSkewSeconds) {
        case nil: break
        case .issuedInFuture?: throw invalid("The custom token is issued in the future (iat)")
        case .notYetValid?: throw invalid("The custom token is not valid yet (nbf)")
        case .expired?, .noExpiry?, .noIssueTime?: throw invalid("The custom token has expired (exp)")
        }
        guard expiresAt <= issuedAt + maximumLifetimeSeconds else {
            throw invalid("The custom token lives longer than one hour (exp - iat)")
        }
        guard case .string(let uid)? = claims["uid"], !uid.isEmpty, uid.count <= maximumUIDLength else {
            throw invalid("uid must be a string of 1 to \(maximumUIDLength) characters")
        }
        let developerClaims = try self.developerClaims(claims["claims"])
        let tokenTenant = try tenant(claims["tenant_id"])
        if let own = signer.tenantId, tokenTenant != own { throw AuthError(.tenantIdMismatch) }
        guard tokenTenant == requestTenantId else { throw AuthError(.tenantIdMismatch) }
        return Accepted(uid: uid, developerClaims: developerClaims)
    }

    private static func invalid(_ detail: String) -> AuthError { AuthError(.invalidCustomToken, detail: detail) }

    private static func developerClaims(_ value: JSONValue?) throws(AuthError) -> [String: JSONValue] {
        switch value {
        case nil, .null?: return [:]
        case .object(let claims)?:
            try CustomClaims.validate(claims)
            return claims
        default: throw AuthError(.invalidClaims)
        }
    }

    /// `tenant_id`: absent, null or empty means project users, as the request's `tenantId` does.
    private static func tenant(_ value: JSONValue?) throws(AuthError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let id)?: return id.isEmpty ? nil : id
        default: throw invalid("tenant_id must be a string")
        }
    }
}
