import Crypto
import Foundation
import PortcullisCore
import PortcullisJSON

/// A refresh token: `pr2.<base64url tenant>.<session id>.<secret>`.
///
/// One session (a sign-in) keeps one row whose current secret changes on every
/// refresh. The tenant travels in the token because `/v1/token` requests carry
/// no tenant and every row is keyed by tenant first; the session id (128 random
/// bits) names the row, and the secret (256 random bits) is what the row holds
/// a SHA-256 of. Neither part is guessable; only the secret is checked.
///
/// A successor is derived, not drawn: `HMAC(key, session.secret)` under a key
/// only the gateway holds. So a client that retries a refresh whose answer it
/// lost (or two tabs refreshing at once) gets the very same new token, while a
/// stolen token still cannot predict the next one.
public struct RefreshToken: Sendable, Equatable {
    /// The tenant (`nil`: project users).
    public let tenantId: String?
    /// The session the token belongs to.
    public let sessionId: String
    /// The secret part (base64url of 32 bytes).
    let secret: String

    /// The whole token, as handed to the client.
    public var string: String {
        "pr2.\(Base64URL.encode(Array((tenantId ?? "").utf8))).\(sessionId).\(secret)"
    }

    /// SHA-256 of the secret: what storage keeps.
    public var secretHash: [UInt8] { SecretToken.hash(secret) }

    /// The first token of a new session.
    public static func startSession(tenantId: String?) -> RefreshToken {
        RefreshToken(tenantId: tenantId, sessionId: SecretToken.random(byteCount: 16), secret: SecretToken.random())
    }

    /// Parses a presented token; `nil` unless it is well formed (so it names a valid tenant).
    public init?(parsing token: String) {
        // On bytes: a String split walks grapheme clusters, and every refresh parses one.
        let bytes = Array(token.utf8)
        guard bytes.count < 512 else { return nil }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].elementsEqual("pr2".utf8), parts[2].count == 22, parts[3].count == 43,
            Base64URL.decode(utf8: parts[2]) != nil, Base64URL.decode(utf8: parts[3]) != nil,
            let tenantBytes = Base64URL.decode(utf8: parts[1]), let tenant = String(validating: tenantBytes, as: UTF8.self),
            tenant.isEmpty || TenantID.isValid(tenant)
        else { return nil }
        self.init(
            tenantId: tenant.isEmpty ? nil : tenant, sessionId: String(decoding: parts[2], as: UTF8.self),
            secret: String(decoding: parts[3], as: UTF8.self))
    }

    /// The token that replaces this one when it is used (the same every time it is asked for).
    public func successor(using key: RefreshTokenKey) -> RefreshToken {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(sessionId).\(secret)".utf8), using: key.key)
        return RefreshToken(tenantId: tenantId, sessionId: sessionId, secret: Base64URL.encode(Array(mac)))
    }

    init(tenantId: String?, sessionId: String, secret: String) {
        self.tenantId = tenantId
        self.sessionId = sessionId
        self.secret = secret
    }
}

/// The key successors are derived with, itself derived from the master key, so every
/// instance of a deployment derives the same successor.
public struct RefreshTokenKey: Sendable {
    let key: SymmetricKey

    /// The deployment's successor key.
    public init(masterKey: MasterKey) {
        key = masterKey.derivedKey(purpose: "portcullis refresh-token successor v1")
    }
}
