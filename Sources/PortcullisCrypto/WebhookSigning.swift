import Crypto
import Foundation
import PortcullisCore
import PortcullisJSON

/// The secrets email-delivery webhooks are signed with, and the signature itself.
///
/// A tenant's secret is derived from the master key, the tenant and a version the tenant's
/// `emailDelivery.webhookSecretVersion` names, so it is stored nowhere: every instance
/// derives the same one, and bumping the version rotates it.
///
/// The signature header is `Portcullis-Signature: t=<unix seconds>,v1=<hex>`, where the
/// hex is HMAC-SHA256 under the secret's UTF-8 bytes of `"<t>." + body`. Receivers check
/// it in constant time and refuse a `t` far from their clock (replays).
public struct WebhookSigningKeys: Sendable {
    let key: SymmetricKey

    /// The header carrying the signature.
    public static let signatureHeader = "Portcullis-Signature"

    /// The deployment's webhook keys.
    public init(masterKey: MasterKey) {
        key = masterKey.derivedKey(purpose: "portcullis webhook signing v1")
    }

    /// The signing secret of `tenantId` (`nil`: project users) at `version`, as the
    /// receiver configures it: `whsec_` and 43 base64url characters.
    public func secret(tenantId: String?, version: Int) -> String {
        let material = HMAC<SHA256>.authenticationCode(for: Data("\(tenantId ?? "")\u{0}\(version)".utf8), using: key)
        return "whsec_" + Base64URL.encode(Array(material))
    }

    /// The signature header's value for `body` sent at `timestamp` (unix seconds).
    public static func signature(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        var message = Array("\(timestamp).".utf8)
        message += body
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=" + code.map { String(format: "%02x", $0) }.joined()
    }
}
