import Foundation

/// The checks of an ID token's claims once its signature verified: a pure decision on the
/// payload, the tenant whose key signed it, the configuration and the time.
enum ClaimsValidation {
    /// Names that are never custom claims: registered JWT claims, Firebase's, and the
    /// reserved names the gateway refuses as custom claims.
    static let nonCustomNames: Set<String> = [
        "iss", "aud", "sub", "user_id", "iat", "exp", "auth_time", "nbf", "email", "email_verified", "phone_number", "name",
        "picture", "firebase", "acr", "amr", "at_hash", "azp", "cnf", "c_hash", "jti", "nonce",
    ]

    /// The identity the claims describe, or why they are refused.
    ///
    /// - Parameter tenant: the tenant whose key verified the signature (`nil`: project users).
    static func identity(
        from claims: [String: JSONValue], tenant: String?, configuration: VerifierConfiguration, now: Date
    ) throws(TokenVerificationError) -> VerifiedIdentity {
        guard case .string(let issuer)? = claims["iss"], issuer == configuration.issuer(tenant: tenant) else {
            throw .wrongIssuer
        }
        guard case .string(let audience)? = claims["aud"], audience == configuration.projectId else { throw .wrongAudience }
        guard case .object(let firebase)? = claims["firebase"] else { throw .invalidClaim(name: "firebase") }
        guard firebase["tenant"]?.stringValue == tenant, configuration.acceptedTenants.accepts(tenant) else { throw .wrongTenant }
        guard case .string(let uid)? = claims["sub"], !uid.isEmpty, uid.count <= 128 else { throw .invalidClaim(name: "sub") }
        if let userId = claims["user_id"], userId != .string(uid) { throw .invalidClaim(name: "user_id") }

        let expiresAt = try time(claims, "exp")
        let issuedAt = try time(claims, "iat")
        let authTime = try time(claims, "auth_time")
        let latestIssue = now.addingTimeInterval(seconds(configuration.issuedAtLeeway))
        guard now < expiresAt.addingTimeInterval(seconds(configuration.expirationLeeway)) else { throw .expired }
        guard issuedAt <= latestIssue, authTime <= latestIssue else { throw .issuedInFuture }
        if claims["nbf"] != nil, try time(claims, "nbf") > latestIssue { throw .issuedInFuture }

        guard case .string(let signInProvider)? = firebase["sign_in_provider"] else {
            throw .invalidClaim(name: "firebase.sign_in_provider")
        }
        return VerifiedIdentity(
            uid: uid, tenantId: tenant, email: try optional(claims, "email", \.stringValue),
            emailVerified: try optional(claims, "email_verified", \.boolValue) ?? false, name: try optional(claims, "name", \.stringValue),
            picture: try optional(claims, "picture", \.stringValue), signInProvider: signInProvider,
            identities: firebase["identities"]?.objectValue ?? [:], authTime: authTime, issuedAt: issuedAt, expiresAt: expiresAt,
            issuer: issuer, customClaims: claims.filter { !nonCustomNames.contains($0.key) })
    }

    /// A NumericDate claim (seconds since 1970).
    private static func time(_ claims: [String: JSONValue], _ name: String) throws(TokenVerificationError) -> Date {
        guard case .number(let seconds)? = claims[name], seconds.isFinite else { throw .invalidClaim(name: name) }
        return Date(timeIntervalSince1970: seconds)
    }

    /// An optional claim of one type: absent or `null` is `nil`, another type is refused.
    private static func optional<Value>(
        _ claims: [String: JSONValue], _ name: String, _ read: (JSONValue) -> Value?
    ) throws(TokenVerificationError) -> Value? {
        guard let value = claims[name], value != .null else { return nil }
        guard let read = read(value) else { throw .invalidClaim(name: name) }
        return read
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
