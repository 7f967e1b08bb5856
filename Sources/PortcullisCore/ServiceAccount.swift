public import Foundation

/// A custom-token signer: the public half of an RSA key that a customer's backend signs
/// custom tokens with (DESIGN.md §3). The private half of a key the gateway generated was
/// handed out once, in a Google-format service-account file, and is stored nowhere.
public struct ServiceAccount: Sendable, Equatable, TenantOwned {
    /// The tenant whose users it signs for; `nil` for a project service account, which signs
    /// for project users and, with `tenant_id`, for any tenant.
    public let tenantId: String?
    /// The key's id: the file's `private_key_id`, which SDKs send as the tokens' `kid`.
    public let keyId: String
    /// The tokens' `iss` and `sub`.
    public let clientEmail: String
    /// Operator's label.
    public let displayName: String?
    /// The RSA public key as a PEM `PUBLIC KEY`.
    public let publicKeyPEM: String
    /// When it was registered.
    public let createTime: Date

    /// Creates a value.
    public init(
        tenantId: String?, keyId: String, clientEmail: String, displayName: String?, publicKeyPEM: String, createTime: Date
    ) {
        self.tenantId = tenantId
        self.keyId = keyId
        self.clientEmail = clientEmail
        self.displayName = displayName
        self.publicKeyPEM = publicKeyPEM
        self.createTime = createTime
    }
}
