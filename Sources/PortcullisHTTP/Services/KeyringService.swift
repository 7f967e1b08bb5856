import Foundation
import NIOPosix
public import Logging
import PortcullisCore
public import PortcullisCrypto
public import PortcullisStore
import Synchronization

/// Per-tenant signing keys: built once per instance, cached, rebuilt on NOTIFY.
///
/// A tenant's first key is made on first use (new tenants and the project's
/// users alike); racing instances are serialised by an advisory lock and the
/// loser adopts the winner's key. Private keys are opened with the master key
/// only here.
public final class KeyringService: InvalidationSubscriber {
    private let keys: SigningKeyRepository
    private let tenants: TenantSettingsCache
    private let masterKey: MasterKey
    private let cache = Mutex<[String: Keyring]>([:])
    private let logger: Logger

    /// A service over the key table, opening keys with `masterKey`.
    public init(keys: SigningKeyRepository, tenants: TenantSettingsCache, masterKey: MasterKey, logger: Logger) {
        self.keys = keys
        self.tenants = tenants
        self.masterKey = masterKey
        self.logger = logger
    }

    /// The tenant's keyring (`nil`: project users), from memory when cached.
    public func keyring(tenantId: String?) async throws -> Keyring {
        if let cached = cache.withLock({ $0[tenantId ?? ""] }) { return cached }
        // The tenant check comes first and is answered from the settings cache (absent tenants
        // included), so tokens naming made-up tenants cost no database round trip.
        let settings = try await tenants.settings(tenantId: tenantId)
        var stored = try await keys.published(tenantId: tenantId)
        if stored.first?.retireTime != nil || stored.isEmpty {
            try await keys.activate(
                tenantId: tenantId, key: seal(Self.generate(settings.signingAlgorithm), tenantId: tenantId),
                publishRetiredSeconds: 0, onlyIfNone: true, actor: "system")
            stored = try await keys.published(tenantId: tenantId)
        }
        guard let activeRow = stored.first, activeRow.retireTime == nil else { throw AuthError(.internalError) }
        let opened = try stored.map { try open($0, tenantId: tenantId) }
        let keyring = try await Keyring(active: opened[0], keys: opened)
        cache.withLock { $0[tenantId ?? ""] = keyring }
        return keyring
    }

    /// Rotates now: a new active key in the tenant's algorithm; the old one stays
    /// published for the ID-token lifetime plus five minutes of clock skew.
    public func rotate(tenantId: String?, actor: String) async throws -> Keyring {
        let settings = try await tenants.settings(tenantId: tenantId)
        try await keys.activate(
            tenantId: tenantId, key: seal(Self.generate(settings.signingAlgorithm), tenantId: tenantId),
            publishRetiredSeconds: settings.idTokenLifetimeSeconds + 300, onlyIfNone: false, actor: actor)
        cache.withLock { $0[tenantId ?? ""] = nil }
        return try await keyring(tenantId: tenantId)
    }

    /// Every key with its state (no private parts), for `GET …/keys`.
    public func list(tenantId: String?) async throws -> [StoredSigningKey] {
        _ = try await keyring(tenantId: tenantId)
        return try await keys.all(tenantId: tenantId)
    }

    /// A new key, made on NIO's blocking-work pool: an RSA-2048 key takes tens to hundreds
    /// of milliseconds of CPU, which must not hold up the threads serving requests.
    private static func generate(_ algorithm: TenantSettings.SigningAlgorithm) async throws -> SigningKey {
        try await NIOThreadPool.singleton.runIfActive { try SigningKey.generate(algorithm) }
    }

    private func seal(_ key: SigningKey, tenantId: String?) throws -> StoredSigningKey {
        StoredSigningKey(
            kid: key.kid, algorithm: key.algorithm.rawValue, publicJWK: key.publicJWK,
            sealedPrivateKey: try masterKey.seal(Array(key.privateMaterial.utf8), context: Self.context(tenantId, key.kid)),
            createTime: Date(), retireTime: nil)
    }

    private func open(_ stored: StoredSigningKey, tenantId: String?) throws -> SigningKey {
        guard let algorithm = TenantSettings.SigningAlgorithm(rawValue: stored.algorithm) else {
            throw AuthError(.internalError)
        }
        let material = try masterKey.open(stored.sealedPrivateKey, context: Self.context(tenantId, stored.kid))
        return SigningKey(
            kid: stored.kid, algorithm: algorithm, publicJWK: stored.publicJWK,
            privateMaterial: String(decoding: material, as: UTF8.self))
    }

    /// The AES-GCM associated data binding a sealed key to its row.
    static func context(_ tenantId: String?, _ kid: String) -> String { "portcullis-signing-key:\(tenantId ?? ""):\(kid)" }

    public func invalidate(_ event: InvalidationEvent) {
        switch event {
        case .signingKeys(let tenantId): cache.withLock { $0[tenantId ?? ""] = nil }
        case .tenant(let id, let version) where version == 0: cache.withLock { $0[id] = nil }
        default: return
        }
    }

    public func invalidateAll() {
        cache.withLock { $0 = [:] }
    }
}
