import Foundation
import NIOPosix
public import PortcullisCore
import PortcullisCrypto
public import PortcullisJSON
public import PortcullisStore

/// Registering, listing and deleting the service accounts that sign custom tokens.
///
/// A generated account's private key is returned once and kept nowhere; a customer may
/// instead register a public key it holds. Generated emails look like Google's
/// (`portcullis-<8 random>@<project>.iam.gserviceaccount.com`; a tenant's carry the tenant:
/// `…@<tenant>.<project>.iam.gserviceaccount.com`) and are unique within their tenant.
public struct ServiceAccountService: Sendable {
    let accounts: ServiceAccountRepository
    let tenants: TenantSettingsCache
    /// The project generated emails name.
    let projectId: String
    let clock: any WallClock

    /// A service over the service-account table.
    public init(accounts: ServiceAccountRepository, tenants: TenantSettingsCache, projectId: String, clock: any WallClock) {
        self.accounts = accounts
        self.tenants = tenants
        self.projectId = projectId
        self.clock = clock
    }

    /// The public key of a service account a customer registers.
    public enum PublicKeyInput: Sendable {
        /// A PEM `PUBLIC KEY` or `RSA PUBLIC KEY`.
        case pem(String)
        /// An RSA JWK.
        case jwk(JSONValue)
    }

    /// A new service account, and for a generated one its private key (shown once).
    public struct Created: Sendable {
        /// The stored account.
        public let account: ServiceAccount
        /// PKCS#8 PEM of a generated key; `nil` when the customer registered its own.
        public let privateKeyPEM: String?
    }

    /// Generates an RSA-2048 key pair (`publicKey` absent) or registers `publicKey`.
    ///
    /// `INVALID_ARGUMENT` for a display name over 256 characters, a public key that is not
    /// RSA of 2048 to 4096 bits, or a `clientEmail` without a public key or not shaped like
    /// an email; `TENANT_NOT_FOUND` for an unknown tenant.
    public func create(
        tenant: TenantScope, displayName: String?, publicKey: PublicKeyInput?, clientEmail: String?, actor: String
    ) async throws -> Created {
        if let displayName, displayName.count > 256 {
            throw AuthError(.invalidArgument, detail: "displayName must be at most 256 characters")
        }
        _ = try await tenants.settings(tenant: tenant)
        let keyId = Self.newKeyId()
        let verificationKey: VerificationKey
        var privateKeyPEM: String?
        switch publicKey {
        case nil:
            guard clientEmail == nil else {
                throw AuthError(.invalidArgument, detail: "clientEmail is accepted only with a publicKey")
            }
            // Key generation is CPU-heavy: off the event loops, like signing keys.
            let pair = try await NIOThreadPool.singleton.runIfActive { try ServiceAccountKeyPair.generate() }
            verificationKey = pair.publicKey
            privateKeyPEM = pair.privateKeyPEM
        case .pem(let pem)?:
            guard let key = VerificationKey(rsaPEM: pem, kid: keyId) else { throw Self.unacceptableKey }
            verificationKey = key
        case .jwk(let jwk)?:
            guard let key = VerificationKey(jwk: jwk), key.algorithm == "RS256" else { throw Self.unacceptableKey }
            verificationKey = key
        }
        let name = displayName?.isEmpty == false ? displayName : nil
        if let clientEmail {
            guard Self.isEmailShaped(clientEmail) else {
                throw AuthError(.invalidArgument, detail: "clientEmail must be an email address")
            }
            let account = ServiceAccount(
                tenantId: tenant.tenantId, keyId: keyId, clientEmail: clientEmail, displayName: name,
                publicKeyPEM: verificationKey.pemRepresentation, createTime: clock.now().date)
            // A customer's own email may have several keys (it rotates them itself).
            guard let stored = try await accounts.insert(account, uniqueEmail: false, actor: actor) else {
                throw AuthError(.internalError)
            }
            return Created(account: stored, privateKeyPEM: privateKeyPEM)
        }
        for _ in 0..<3 {
            let account = ServiceAccount(
                tenantId: tenant.tenantId, keyId: keyId, clientEmail: generatedEmail(tenant: tenant), displayName: name,
                publicKeyPEM: verificationKey.pemRepresentation, createTime: clock.now().date)
            if let stored = try await accounts.insert(account, uniqueEmail: true, actor: actor) {
                return Created(account: stored, privateKeyPEM: privateKeyPEM)
            }
        }
        // 36^8 names: three clashes in a row is not chance.
        throw AuthError(.internalError)
    }

    /// The tenant's service accounts, newest first (public parts only); `TENANT_NOT_FOUND`
    /// for an unknown tenant.
    public func list(tenant: TenantScope) async throws -> [ServiceAccount] {
        _ = try await tenants.settings(tenant: tenant)
        return try await accounts.list(tenant: tenant)
    }

    /// Deletes a service account: its tokens are refused from the next request on (this
    /// instance's key cache follows the commit; the others' when the NOTIFY arrives).
    /// `SERVICE_ACCOUNT_NOT_FOUND` when the tenant has none with this key id.
    public func delete(tenant: TenantScope, keyId: String, actor: String) async throws {
        _ = try await tenants.settings(tenant: tenant)
        guard try await accounts.delete(tenant: tenant, keyId: keyId, actor: actor) else {
            throw AuthError(.serviceAccountNotFound)
        }
    }

    private static let unacceptableKey = AuthError(
        .invalidArgument, detail: "publicKey must be an RSA public key of 2048 to 4096 bits")

    /// 40 lowercase hex characters (160 random bits), like Google's `private_key_id`.
    static func newKeyId() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<40).map { _ in digits[Int.random(in: 0..<16, using: &generator)] })
    }

    private func generatedEmail(tenant: TenantScope) -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let suffix = String((0..<8).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        let domain = tenant.tenantId.map { "\($0.lowercased()).\(projectId)" } ?? projectId
        return "portcullis-\(suffix)@\(domain).iam.gserviceaccount.com"
    }

    /// One `@` with something on each side, no spaces or control characters, at most 254 bytes:
    /// the email is only ever compared with tokens' `iss`, so its shape is all that matters.
    static func isEmailShaped(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        return email.utf8.count <= 254 && parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
            && !email.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
    }
}
