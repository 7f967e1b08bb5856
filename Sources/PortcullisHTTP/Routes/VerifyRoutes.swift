import HTTPTypes
import Hummingbird
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON

/// `GET /v1/verify`: forward auth for reverse proxies (nginx `auth_request`, Traefik, Caddy).
///
/// 200 with `X-Auth-*` headers for a valid ID token; 401 with none otherwise.
/// Without `checkRevoked` it touches no database once the tenant's keys are cached
/// (signature and claims only), and keeps answering from them through a database outage.
/// What it cannot decide without the database (`checkRevoked`, a tenant not cached yet) is
/// 503: a 401 would send every user of the proxy to sign in again.
struct VerifyRoutes {
    let tokens: TokenService
    let revocation: RevocationCache

    static let userId = HTTPField.Name("X-Auth-User-Id")!  // safe: constant, valid
    static let tenantId = HTTPField.Name("X-Auth-Tenant-Id")!  // safe: constant, valid
    static let email = HTTPField.Name("X-Auth-Email")!  // safe: constant, valid
    static let emailVerified = HTTPField.Name("X-Auth-Email-Verified")!  // safe: constant, valid
    static let claims = HTTPField.Name("X-Auth-Claims")!  // safe: constant, valid
    static let pinnedTenant = HTTPField.Name("X-Tenant-Id")!  // safe: constant, valid

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("v1/verify") { request, context in
            // A proxy's misconfiguration is refused loudly rather than read as "no check".
            let checkRevoked = try request.booleanQuery("checkRevoked") ?? false
            guard let token = BearerToken.parse(request.headers[.authorization]) else {
                throw AuthError(.unauthenticated, detail: "MISSING_ID_TOKEN")
            }
            let verified: IDTokenClaimsView
            do {
                let claims = try await tokens.verifyIDToken(token)
                if let pinned = request.headers[Self.pinnedTenant], pinned != (claims.tenantId ?? "") {
                    throw AuthError(.tenantIdMismatch)
                }
                if checkRevoked {
                    try await revocation.check(tenant: TenantScope(claims.tenantId), uid: claims.subject, authTime: claims.authTime)
                }
                verified = IDTokenClaimsView(claims)
                context.tenant.set(TenantScope(claims.tenantId))
            } catch let error as AuthError where error.code != .unavailable {
                throw AuthError(.unauthenticated, detail: error.code.rawValue)
            }
            var headers: HTTPFields = [Self.userId: verified.uid, Self.emailVerified: verified.emailVerified ? "true" : "false"]
            headers[Self.tenantId] = verified.tenantId ?? ""
            if let email = verified.email { headers[Self.email] = email }
            headers[Self.claims] = verified.claims
            return Response(status: .ok, headers: headers)
        }
    }
}

/// What forward auth exposes of a verified token.
struct IDTokenClaimsView {
    let uid: String
    let tenantId: String?
    let email: String?
    let emailVerified: Bool
    /// base64url of the JSON object of the custom claims.
    let claims: String

    init(_ claims: IDTokenClaims) {
        uid = claims.subject
        tenantId = claims.tenantId
        email = claims.email
        emailVerified = claims.emailVerified ?? false
        self.claims =
            claims.customClaims.isEmpty
            ? "e30"  // base64url of "{}", the common case
            : Base64URL.encode(JSONValue.object(claims.customClaims).serializedBytes())
    }
}
