import Crypto
import Foundation
import PortcullisCore
import PortcullisJSON

/// The token the action page's form carries, bound to the action code it applies.
///
/// Opening an action link applies nothing: mail scanners and link previews fetch links,
/// so a `GET` only shows what the link will do. Only the page's own form, posted back with
/// this token, applies the code. The token is an HMAC of the tenant and the code under a
/// key derived from the master key, so it is stored nowhere, every instance checks it,
/// and a token made for one code is worthless for any other.
public struct ActionFormTokens: Sendable {
    let key: SymmetricKey

    /// The deployment's form tokens.
    public init(masterKey: MasterKey) {
        key = masterKey.derivedKey(purpose: "portcullis action page form v1")
    }

    /// The token of the form applying `code` for `tenantId`.
    public func token(code: String, tenantId: String?) -> String {
        Base64URL.encode(Array(mac(code: code, tenantId: tenantId)))
    }

    /// Whether `presented` is the token of `code` for `tenantId` (compared in constant time).
    public func accepts(_ presented: String?, code: String, tenantId: String?) -> Bool {
        guard let presented, let bytes = Base64URL.decode(presented) else { return false }
        return SecretToken.constantTimeEquals(bytes, Array(mac(code: code, tenantId: tenantId)))
    }

    private func mac(code: String, tenantId: String?) -> HashedAuthenticationCode<SHA256> {
        HMAC<SHA256>.authenticationCode(for: Data("\(tenantId ?? "")\u{0}\(code)".utf8), using: key)
    }
}
