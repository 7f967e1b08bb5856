/// Why an ID token was refused, or why it could not be checked.
///
/// No case carries the token, nor any part of it beyond a short, sanitised algorithm name:
/// descriptions are safe to log and to send back to the presenter.
public enum TokenVerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a compact JWS with a JSON header and payload, or a header this verifier does not
    /// understand (`crit`); `reason` says which part.
    case malformed(reason: String)
    /// The header's `alg` is not RS256, ES256 or EdDSA (`none` and HMAC among them).
    case unsupportedAlgorithm(String)
    /// The header's `alg` is not the algorithm of the key its `kid` names.
    case algorithmMismatch
    /// No key of the issuer's JWKS has the header's `kid`, even after one refetch.
    case unknownKeyId
    /// The signature does not verify with the key the header's `kid` names.
    case badSignature
    /// `iss` is not the expected issuer of the token's tenant.
    case wrongIssuer
    /// `aud` is not the configured project id.
    case wrongAudience
    /// The token's tenant (`firebase.tenant`) is not one this verifier accepts, or is not the
    /// tenant of its issuer.
    case wrongTenant
    /// The gateway knows no tenant of that id (its JWKS answered 404).
    case unknownTenant
    /// A claim is missing or has the wrong type or size; `name` is the claim's name.
    case invalidClaim(name: String)
    /// `exp` has passed.
    case expired
    /// `iat`, `auth_time` or `nbf` is later than now, beyond the allowed clock skew.
    case issuedInFuture
    /// The gateway says the session is no longer valid (revoked, user disabled or deleted);
    /// `detail` is the gateway's code, e.g. `TOKEN_EXPIRED` or `USER_DISABLED`.
    case revoked(detail: String)
    /// The issuer's JWKS could not be fetched or read.
    case jwksUnavailable(reason: String)
    /// The gateway could not answer a revocation check.
    case gatewayUnavailable(reason: String)

    /// Whether the failure is the gateway's (unreachable, or answering nonsense) rather than
    /// the token's: a caller answers 503 rather than 401.
    public var isUnavailable: Bool {
        switch self {
        case .jwksUnavailable, .gatewayUnavailable: true
        default: false
        }
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .malformed(let reason): "malformed token: \(reason)"
        case .unsupportedAlgorithm(let name): "unsupported signing algorithm \(name)"
        case .algorithmMismatch: "the token's algorithm is not its key's"
        case .unknownKeyId: "no published key has the token's key id"
        case .badSignature: "the token's signature does not verify"
        case .wrongIssuer: "the token's issuer is not the expected one"
        case .wrongAudience: "the token's audience is not this project"
        case .wrongTenant: "the token's tenant is not accepted"
        case .unknownTenant: "the token names a tenant the gateway does not know"
        case .invalidClaim(let name): "the token's \(name) claim is missing or invalid"
        case .expired: "the token has expired"
        case .issuedInFuture: "the token is issued in the future"
        case .revoked(let detail): "the session is no longer valid: \(detail)"
        case .jwksUnavailable(let reason): "the gateway's keys are unavailable: \(reason)"
        case .gatewayUnavailable(let reason): "the gateway is unavailable: \(reason)"
        }
    }

    /// `text` cut to `limit` characters of letters, digits and `-_.:`, for values read from
    /// a token or an answer (never the token itself).
    static func sanitised(_ text: some StringProtocol, limit: Int = 64) -> String {
        let kept = text.unicodeScalars.prefix(limit).filter { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.: ".unicodeScalars.contains(scalar))
        }
        return kept.isEmpty ? "(unprintable)" : String(String.UnicodeScalarView(kept))
    }
}
