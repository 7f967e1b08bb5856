import Crypto
public import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
public import PortcullisOutbound

/// Verifies what a client presents to `signInWithIdp` — an identity provider's OIDC ID
/// token or an OAuth access token — and says who the provider vouches for.
///
/// An ID token is verified locally against the provider's JWKS (through ``JWKSCache``):
///
/// - a compact JWS whose `alg` is RS256 or ES256 (`none`, HMAC — including HS256 with the
///   provider's public key as the secret — and everything else are refused);
/// - a key of the provider's JWKS with the header's `kid` (unknown: one refetch, then
///   refused) whose signature verifies;
/// - `iss` equal to the provider's issuer (Google's also without `https://`; Microsoft
///   without a configured issuer: `https://login.microsoftonline.com/{tid}/v2.0` for the
///   token's own `tid`, since the issuer names the user's directory);
/// - `aud` (a string or an array) naming one of the provider's client ids;
/// - `exp` after now and `iat` (and `nbf`, when present) not after now, each with 60 s of
///   clock skew;
/// - the nonce, as Firebase checks it: when either side has one, the token's `nonce` must
///   be the SHA-256 (hex) of the raw nonce the client sent — what Apple's and Firebase's
///   client SDKs put in the token. A token whose `nonce` merely *equals* the sent nonce is
///   refused: the token shows its nonce to whoever holds it, so equality would let a
///   stolen token pass by sending its own claim back; only the hash's preimage proves the
///   sender started the sign-in. A token with a nonce and a request without one is refused
///   too (the client asked for replay protection, then dropped it). Both answers are
///   `MISSING_OR_INVALID_NONCE` with Firebase's details;
/// - a non-empty `sub`.
///
/// An access token is resolved at the provider's user-info endpoint (the token is the
/// bearer credential; GitHub also gets its JSON media type). Every failure is
/// `INVALID_IDP_RESPONSE` (400) with a detail saying what did not verify — never a 500,
/// and never later than the outbound client's deadline.
public struct IdPTokenVerifier: Sendable {
    /// The allowed clock difference between the provider and the gateway, in seconds.
    public static let clockSkew: Int64 = 60

    private let client: OutboundHTTPClient
    private let keys: JWKSCache
    private let clock: any WallClock

    /// A verifier fetching user-info through `client`, keys through `keys`, reading time from `clock`.
    public init(client: OutboundHTTPClient, keys: JWKSCache, clock: any WallClock) {
        self.client = client
        self.keys = keys
        self.clock = clock
    }

    /// Verifies `credential` as coming from `provider`: its ID token when it has one and
    /// the provider publishes keys, else its access token when the provider has a
    /// user-info endpoint.
    ///
    /// Throws `AuthError(.invalidIdpResponse, detail: <reason>)` for anything that does not
    /// verify, `AuthError(.missingOrInvalidNonce)` for a nonce mismatch; never hangs past
    /// the client's deadline.
    public func verify(
        _ credential: FederatedCredential, with provider: IdentityProvider
    ) async throws
        -> FederatedIdentity
    {
        let name = provider.providerId
        guard credential.providerId == name else {
            throw Self.invalid("the credential is for \(credential.providerId), not \(name)")
        }
        let idToken = credential.idToken.flatMap { $0.isEmpty ? nil : $0 }
        let accessToken = credential.accessToken.flatMap { $0.isEmpty ? nil : $0 }
        if let idToken, let jwksURI = provider.effectiveJWKSURI {
            return try await verifyIDToken(idToken, nonce: credential.nonce, provider: provider, jwksURI: jwksURI)
        }
        if let accessToken, let userInfoURI = provider.effectiveUserInfoURI {
            return try await resolveAccessToken(accessToken, provider: provider, userInfoURI: userInfoURI)
        }
        switch (idToken, accessToken) {
        case (nil, nil):
            throw Self.invalid("the credential has neither an id_token nor an access_token")
        case (_?, nil):
            throw Self.invalid("\(name) has no JWKS URI to verify ID tokens with; send an access_token")
        case (nil, _?):
            throw Self.invalid("\(name) has no user-info URI to resolve access tokens with; send an id_token")
        case (_?, _?):
            throw Self.invalid("\(name) has neither a JWKS URI nor a user-info URI")
        }
    }

    // MARK: ID tokens

    private func verifyIDToken(
        _ token: String, nonce: String?, provider: IdentityProvider, jwksURI: String
    )
        async throws -> FederatedIdentity
    {
        let name = provider.providerId
        guard let jws = CompactJWS(token) else { throw Self.invalid("the \(name) id_token is not a compact JWS") }
        guard jws.algorithm == "RS256" || jws.algorithm == "ES256" else {
            throw Self.invalid("the \(name) id_token's algorithm \(Self.printable(jws.algorithm)) is not accepted")
        }
        let candidates: [VerificationKey]
        do {
            candidates = try await keys.keys(url: jwksURI, kid: jws.kid)
        } catch {
            throw Self.invalid("\(name)'s keys could not be fetched: \(error.reason)")
        }
        guard !candidates.isEmpty else {
            throw Self.invalid("unknown key \(jws.kid.map(Self.printable) ?? "(no kid)") for \(name)'s id_token")
        }
        // Without a `kid` only a set of one key is tried: the token must say which key it is.
        guard jws.kid != nil || candidates.count == 1 else {
            throw Self.invalid("the \(name) id_token names no key (kid) and the provider publishes several")
        }
        guard candidates.contains(where: jws.isSigned(by:)) else {
            throw Self.invalid("the \(name) id_token's signature does not verify")
        }
        let claims = jws.claims
        try checkIssuer(claims, provider: provider)
        try checkAudience(claims, provider: provider)
        try checkTimes(claims, name: name)
        try Self.checkNonce(claims["nonce"], sent: nonce)
        guard case .string(let subject)? = claims["sub"], !subject.isEmpty else {
            throw Self.invalid("the \(name) id_token has no sub")
        }
        return FederatedIdentity(
            providerId: name, federatedId: subject, email: Self.string(claims["email"])?.lowercased(),
            emailVerifiedClaim: Self.flag(claims["email_verified"]), displayName: Self.string(claims["name"]),
            photoURL: Self.string(claims["picture"]), rawUserInfo: .object(claims))
    }

    private func checkIssuer(_ claims: [String: JSONValue], provider: IdentityProvider) throws {
        let name = provider.providerId
        guard case .string(let issuer)? = claims["iss"] else { throw Self.invalid("the \(name) id_token has no iss") }
        var accepted: Set<String> = []
        if let expected = provider.effectiveIssuer {
            accepted.insert(expected)
            // Google's older tokens say `accounts.google.com` without the scheme.
            if expected == "https://accounts.google.com" { accepted.insert("accounts.google.com") }
        } else if name == "microsoft.com" {
            // Microsoft's issuer names the user's directory; the token says which in `tid`.
            guard case .string(let tenant)? = claims["tid"], !tenant.isEmpty else {
                throw Self.invalid("the microsoft.com id_token has no tid")
            }
            accepted.insert("https://login.microsoftonline.com/\(tenant)/v2.0")
        } else {
            throw Self.invalid("\(name) has no issuer configured to check id_tokens against")
        }
        guard accepted.contains(issuer) else {
            throw Self.invalid("the \(name) id_token's issuer \(Self.printable(issuer)) is not \(name)'s")
        }
    }

    private func checkAudience(_ claims: [String: JSONValue], provider: IdentityProvider) throws {
        guard JWTClaimSet(claims).isAddressed(to: provider.audiences) else {
            throw Self.invalid("the \(provider.providerId) id_token is not for this app's client id (aud)")
        }
    }

    private func checkTimes(_ claims: [String: JSONValue], name: String) throws {
        let lapse = JWTClaimSet(claims).lapse(at: clock.now().seconds, expiryLeeway: Self.clockSkew, issueLeeway: Self.clockSkew)
        switch lapse {
        case nil: return
        case .noExpiry?: throw Self.invalid("the \(name) id_token has no exp")
        case .expired?: throw Self.invalid("the \(name) id_token has expired")
        case .noIssueTime?: throw Self.invalid("the \(name) id_token has no iat")
        case .issuedInFuture?: throw Self.invalid("the \(name) id_token is issued in the future (iat)")
        case .notYetValid?: throw Self.invalid("the \(name) id_token is not valid yet (nbf)")
        }
    }

    /// Firebase's rule: the token's nonce is the SHA-256 hex of the raw nonce the client sent.
    private static func checkNonce(_ claim: JSONValue?, sent: String?) throws {
        let inToken = string(claim)
        let sent = sent.flatMap { $0.isEmpty ? nil : $0 }
        switch (inToken, sent) {
        case (nil, nil):
            return
        case (_?, nil):
            throw AuthError(.missingOrInvalidNonce, detail: "Nonce is missing in the request.")
        case (nil, _?):
            throw AuthError(.missingOrInvalidNonce, detail: "The ID token has no nonce.")
        case (let inToken?, let sent?):
            let hashed = SHA256.hash(data: Array(sent.utf8)).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
            guard inToken.lowercased() == hashed else {
                throw AuthError(
                    .missingOrInvalidNonce,
                    detail: "The nonce in ID Token does not match the SHA256 hash of the raw nonce in the request.")
            }
        }
    }

    // MARK: Access tokens

    private func resolveAccessToken(
        _ token: String, provider: IdentityProvider, userInfoURI: String
    ) async throws
        -> FederatedIdentity
    {
        let name = provider.providerId
        var headers = [("Authorization", "Bearer \(token)"), ("Accept", "application/json")]
        if name == "github.com" { headers[1] = ("Accept", "application/vnd.github+json") }
        let response: OutboundResponse
        do {
            response = try await client.get(userInfoURI, headers: headers)
        } catch {
            if case .badStatus(let status) = error.kind, (400..<500).contains(status) {
                throw Self.invalid("\(name)'s user info rejected the access token")
            }
            throw Self.invalid("\(name)'s user info could not be fetched: \(error)")
        }
        guard case .object(var profile)? = try? JSONValue.parse(response.body) else {
            throw Self.invalid("\(name)'s user info is not a JSON object")
        }
        // Twitter's v2 API wraps the user in `data`.
        if profile["id"] == nil, profile["sub"] == nil, case .object(let inner)? = profile["data"] {
            profile = inner
        }
        let federatedId: String? =
            switch profile["sub"] ?? profile["id"] {
            case .string(let id)?: id
            case .integer(let id)?: String(id)
            case .double(let id)? where id.rounded() == id && abs(id) < 1e15: String(Int64(id))
            default: nil
            }
        guard let federatedId, !federatedId.isEmpty else { throw Self.invalid("\(name)'s user info has no id") }
        var photo =
            Self.string(profile["picture"]) ?? Self.string(profile["avatar_url"])
            ?? Self.string(profile["profile_image_url"])
        // Facebook: `picture: {data: {url}}`.
        if photo == nil, case .object(let picture)? = profile["picture"], case .object(let data)? = picture["data"] {
            photo = Self.string(data["url"])
        }
        return FederatedIdentity(
            providerId: name, federatedId: federatedId, email: Self.string(profile["email"])?.lowercased(),
            emailVerifiedClaim: Self.flag(profile["email_verified"]) ?? Self.flag(profile["verified_email"]),
            displayName: Self.string(profile["name"]), photoURL: photo, rawUserInfo: .object(profile), fromAccessToken: true)
    }

    // MARK: Reading claims

    private static func invalid(_ detail: String) -> AuthError { AuthError(.invalidIdpResponse, detail: detail) }

    private static func string(_ value: JSONValue?) -> String? {
        guard case .string(let text)? = value, !text.isEmpty else { return nil }
        return text
    }

    /// `true`/`false`, also as the strings some providers send.
    private static func flag(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag)?: flag
        case .string("true")?: true
        case .string("false")?: false
        default: nil
        }
    }

    /// A token-supplied string fit for an error detail: at most 64 visible ASCII characters.
    private static func printable(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(64))
        return "\"\(cleaned)\""
    }
}
