import Crypto
import CryptoExtras
import Foundation
public import PortcullisCore
import PortcullisCrypto
public import PortcullisJSON
import Synchronization

/// The tokens a fake provider mints: RS256 ID tokens signed with its keys, and forgeries.
extension FakeIdentityProvider {
    /// An RS256 ID token signed with the current key (its `kid` unless `kid` overrides it).
    ///
    /// Defaults: issuer ``issuer``, audience ``audience``, issued now, expiring in an hour.
    /// `nil` claims are left out; `extraClaims` are added last (and may replace any).
    public func idToken(
        sub: String = "federated-user-1", email: String? = "user@example.com", emailVerified: JSONValue? = .bool(true),
        name: String? = "Fed User", picture: String? = nil, audience: JSONValue? = nil, issuer: String? = nil,
        expiresIn: Int64 = 3600, issuedAt: Timestamp? = nil, nonce: String? = nil, kid: String? = nil,
        extraClaims: [String: JSONValue] = [:]
    ) -> String {
        let issued = (issuedAt ?? SystemClock().now()).seconds
        var claims: [String: JSONValue] = [
            "iss": .string(issuer ?? self.issuer), "aud": audience ?? .string(self.audience), "sub": .string(sub),
            "iat": .integer(issued), "exp": .integer(issued + expiresIn),
        ]
        if let email { claims["email"] = .string(email) }
        if let emailVerified { claims["email_verified"] = emailVerified }
        if let name { claims["name"] = .string(name) }
        if let picture { claims["picture"] = .string(picture) }
        if let nonce { claims["nonce"] = .string(nonce) }
        claims.merge(extraClaims) { _, extra in extra }
        let (key, signingKid) = state.values.withLock { values in (values.keys[values.signingKid], values.signingKid) }
        return Self.sign(claims: claims, kid: kid ?? signingKid, with: key)
    }

    /// An RS256 token signed with a key this provider never publishes, under `kid`.
    public func idTokenSignedWithUnpublishedKey(kid: String, sub: String = "federated-user-1") -> String {
        let now = SystemClock().now().seconds
        let claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(sub), "iat": .integer(now),
            "exp": .integer(now + 3600),
        ]
        return Self.sign(claims: claims, kid: kid, with: Self.keyPool.last)
    }

    /// A token with any header and claims and the given signature bytes (for `alg: none`
    /// and other forgeries).
    public static func rawToken(header: [String: JSONValue], claims: [String: JSONValue], signature: [UInt8]) -> String {
        signingInput(header: header, claims: claims) + "." + Base64URL.encode(signature)
    }

    /// An HS256 token whose HMAC key is `secret` (the key-confusion attack uses the
    /// provider's public key PEM as the secret).
    public static func hs256Token(claims: [String: JSONValue], kid: String?, secret: String) -> String {
        var header: [String: JSONValue] = ["alg": .string("HS256"), "typ": .string("JWT")]
        if let kid { header["kid"] = .string(kid) }
        let input = signingInput(header: header, claims: claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return input + "." + Base64URL.encode(Array(mac))
    }

    /// The claims ``idToken(sub:email:emailVerified:name:picture:audience:issuer:expiresIn:issuedAt:nonce:kid:extraClaims:)``
    /// would sign, decoded back from a token (for building forgeries from a valid token).
    public static func claims(of token: String) -> [String: JSONValue] {
        CompactJWS(token)?.claims ?? [:]
    }

    /// SHA-256 of `text` in lower-case hex: what Apple's and Firebase's clients put in an
    /// ID token's `nonce` for the raw nonce they send.
    public static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    private static func signingInput(header: [String: JSONValue], claims: [String: JSONValue]) -> String {
        Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(claims).serializedBytes())
    }

    private static func sign(claims: [String: JSONValue], kid: String, with key: _RSA.Signing.PrivateKey?) -> String {
        let header: [String: JSONValue] = ["alg": .string("RS256"), "typ": .string("JWT"), "kid": .string(kid)]
        let input = signingInput(header: header, claims: claims)
        let signature =
            (try? key?.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)).map { Array($0.rawRepresentation) }
            ?? []
        return input + "." + Base64URL.encode(signature)
    }
}
