import Foundation
public import PortcullisCore
import PortcullisCrypto
public import PortcullisStore

/// Issuing, listing and revoking admin keys (HTTP and CLI share it).
public struct AdminKeyService: Sendable {
    let keys: AdminKeyRepository
    let clock: any WallClock

    /// A service over the key repository.
    public init(keys: AdminKeyRepository, clock: any WallClock) {
        self.keys = keys
        self.clock = clock
    }

    /// Creates a key; the returned secret exists nowhere else and is shown once.
    public func create(
        displayName: String, scope: AdminScope, actor: String
    ) async throws -> (
        key: AdminKey, secret: String
    ) {
        guard !displayName.isEmpty, displayName.count <= 256 else {
            throw AuthError(.invalidArgument, detail: "displayName must be 1 to 256 characters")
        }
        if let tenantId = scope.tenantId, !TenantID.isValid(tenantId) { throw AuthError(.tenantNotFound) }
        let credential = AdminKeyCredential.generate()
        let key = try await keys.insert(
            keyId: credential.keyId, secretHash: credential.secretHash, displayName: displayName, scope: scope,
            actor: actor, at: clock.now().date)
        return (key, credential.secret)
    }

    /// The live key `secret` is the secret of, or `nil`: malformed, unknown, revoked, or not
    /// this key's secret (the stored SHA-256 is compared in constant time).
    public func activeKey(secret: String) async throws -> AdminKey? {
        guard let (keyId, presentedHash) = AdminKeyCredential.parse(secret),
            let (key, storedHash) = try await keys.findActive(keyId: keyId),
            SecretToken.constantTimeEquals(presentedHash, storedHash)
        else { return nil }
        return key
    }

    /// Records that `key` was used now, at most once a minute (keeps the admin path read-mostly).
    public func recordUse(of key: AdminKey) async throws {
        let now = clock.now().date
        let minuteAgo = now.addingTimeInterval(-60)
        guard key.lastUsedTime.map({ $0 < minuteAgo }) ?? true else { return }
        try await keys.touch(keyId: key.keyId, at: now, unlessUsedSince: minuteAgo)
    }

    /// Live keys, all or those of one tenant.
    public func list(ofTenant tenantId: String?) async throws -> [AdminKey] {
        try await keys.list(ofTenant: tenantId)
    }

    /// Revokes a key at once: its next request is 401.
    public func revoke(keyId: String, actor: String) async throws {
        guard try await keys.revoke(keyId: keyId, actor: actor, at: clock.now().date) else { throw AuthError(.adminKeyNotFound) }
    }
}
