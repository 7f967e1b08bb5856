import Foundation
public import Logging
import NIOPosix
public import PortcullisCore
public import PortcullisCrypto
public import PortcullisStore
import Synchronization

/// Per-tenant signing keys: built once per instance on first use, cached within the
/// keyrings' share of `cache.tenant_bytes`, rebuilt on NOTIFY or after eviction.
///
/// A tenant's first key is taken on first use (new tenants and the project's users alike)
/// from the ``SigningKeyPool``, made ahead, once per instance however many requests find
/// it missing together;
/// racing instances are serialised by an advisory lock and the loser adopts the
/// winner's key. Private keys are opened with the master key only here.
///
/// Rotation comes in two kinds. An operator's (``rotate(tenant:actor:)``) is
/// immediate: it is what one does after a key leaks. A scheduled one
/// (``scheduleRotation(tenant:dueAfterSeconds:)``) publishes the next key in the
/// JWKS ``rotationLeadSeconds`` (twice the JWKS `max-age`) before it signs, so a
/// verifier holding a cached JWKS never meets a `kid` it has not seen; every
/// instance's keyring switches keys at that second by itself.
public final class KeyringService: InvalidationSubscriber {
    private let keys: SigningKeyRepository
    private let tenants: TenantSettingsCache
    private let masterKey: MasterKey
    private let cache: GuardedCache<String, Keyring>
    /// The first keys being made, by tenant: a new tenant's first requests arrive together,
    /// and each making an RSA key of its own would take all the cores for seconds, only for
    /// one key to be kept.
    private let firstKeys = Mutex<[String: Task<Void, any Error>]>([:])
    private let logger: Logger
    private let generateKey: @Sendable (TenantSettings.SigningAlgorithm) async throws -> SigningKey
    /// Whether `generateKey` has a key of the algorithm ready-made (the pool's).
    private let keyReady: @Sendable (TenantSettings.SigningAlgorithm) -> Bool
    /// The JWKS responses' `max-age`, in seconds.
    public let jwksMaxAgeSeconds: Int
    /// The clock keys' states are judged by.
    public let clock: any WallClock

    /// A service over the key table, opening keys with `masterKey` and making new ones with
    /// `generateKey` (``generate(_:)`` unless a test counts them), which `keyReady` says has
    /// one ready-made; it keeps keyrings least-recently-used, their `Keyring.estimatedBytes`
    /// adding up to at most `cacheLimit`.
    public init(
        keys: SigningKeyRepository, tenants: TenantSettingsCache, masterKey: MasterKey, jwksMaxAgeSeconds: Int = 300,
        clock: any WallClock, logger: Logger, cacheLimit: Int = TenantCacheBudget().keyrings,
        cacheMetrics: CacheMetrics = .none,
        generateKey: @escaping @Sendable (TenantSettings.SigningAlgorithm) async throws -> SigningKey = KeyringService.generate,
        keyReady: @escaping @Sendable (TenantSettings.SigningAlgorithm) -> Bool = { _ in false }
    ) {
        self.cache = GuardedCache(limit: cacheLimit, cost: { $0.estimatedBytes }, metrics: cacheMetrics)
        self.generateKey = generateKey
        self.keyReady = keyReady
        self.keys = keys
        self.tenants = tenants
        self.masterKey = masterKey
        self.jwksMaxAgeSeconds = jwksMaxAgeSeconds
        self.clock = clock
        self.logger = logger
    }

    /// How long a scheduled rotation publishes the next key before it signs.
    public var rotationLeadSeconds: Int { 2 * jwksMaxAgeSeconds }

    /// The tenant's keyring (`nil`: project users), from memory when cached.
    public func keyring(tenant: TenantScope) async throws -> Keyring {
        try await cache.value(for: tenant.key) { try await load(tenant: tenant) }
    }

    /// Readies a tenant just created with keys of `algorithm`: when one is ready-made, stores it
    /// as the tenant's first and caches the keyring, so that the tenant's first sign-in (on this
    /// instance, or on another, which then only reads the key) stores none. Otherwise, or if
    /// this fails, the first request makes the key as before.
    public func prepare(tenant: TenantScope, algorithm: TenantSettings.SigningAlgorithm) async {
        // Asked first, and costing nothing: past the pool's few keys, a burst of creations skips the rest.
        guard keyReady(algorithm) else { return }
        do {
            _ = try await keyring(tenant: tenant)
        } catch {
            logger.debug("a new tenant's first key was left to its first request", metadata: ["tenant": "\(tenant)", "error": "\(error)"])
        }
    }

    /// The tenant's keyring if this instance holds it, leaving the eviction order alone.
    public func cached(tenant: TenantScope) -> Keyring? {
        cache.cached(tenant.key)
    }

    private func load(tenant: TenantScope) async throws -> Keyring {
        // The tenant check comes first and is answered from the settings cache (absent tenants
        // included), so tokens naming made-up tenants cost no database round trip.
        let settings = try await tenants.settings(tenant: tenant)
        let now = clock.now().date
        var stored = try await keys.published(tenant: tenant, at: now)
        if !stored.contains(where: { $0.retireTime == nil }) {
            try await makeFirstKey(tenant: tenant, algorithm: settings.signingAlgorithm, at: now)
            stored = try await keys.published(tenant: tenant, at: now)
        }
        let pending = stored.first { $0.state(at: now) == .pending }
        guard let active = stored.last(where: { $0.state(at: now) == .active }) else { throw AuthError(.internalError) }
        let opened = try stored.filter { $0.kid != pending?.kid }.map { try open($0, tenant: tenant) }
        return try await Keyring(
            active: try open(active, tenant: tenant), keys: opened,
            next: try pending.map { (try open($0, tenant: tenant), Int64($0.signsFrom.timeIntervalSince1970.rounded(.up))) })
    }

    /// Makes the tenant's first key, or waits for the one this instance is already making.
    ///
    /// Only the making is shared: each caller reads the keys again afterwards, so none is
    /// handed a keyring read before an invalidation it arrived after.
    private func makeFirstKey(tenant: TenantScope, algorithm: TenantSettings.SigningAlgorithm, at now: Date) async throws {
        let making = firstKeys.withLock { making in
            if let running = making[tenant.key] { return running }
            // Unstructured, so a first caller that gives up (its client went away) does not
            // fail the others waiting for the same key.
            let task = Task { [self] in
                defer { _ = firstKeys.withLock { $0.removeValue(forKey: tenant.key) } }
                // A caller that read "no key" just before another task's key committed can arrive
                // after that task ended: it finds the key here rather than making one more.
                if try await keys.published(tenant: tenant, at: now).contains(where: { $0.retireTime == nil }) { return }
                do {
                    try await keys.activate(
                        tenant: tenant, key: seal(generateKey(algorithm), tenant: tenant),
                        activation: .first, publishRetiredSeconds: 0, actor: "system", at: now)
                } catch Conflict.tenantMissing {
                    // Deleted since this instance cached its settings: a tenant that is not there has no keys.
                    throw AuthError(.tenantNotFound)
                }
            }
            making[tenant.key] = task
            return task
        }
        try await making.value
    }

    /// Rotates now: a new active key in the tenant's algorithm; the old one stays
    /// published for the ID-token lifetime plus five minutes of clock skew. A key a
    /// scheduled rotation published but has not started signing with is dropped.
    public func rotate(tenant: TenantScope, actor: String) async throws -> Keyring {
        let settings = try await tenants.settings(tenant: tenant)
        try await keys.activate(
            tenant: tenant, key: seal(generateKey(settings.signingAlgorithm), tenant: tenant),
            activation: .immediately, publishRetiredSeconds: settings.idTokenLifetimeSeconds + 300, actor: actor,
            at: clock.now().date)
        // The activation's commit has dropped the cached keyring (it announces `.signingKeys`).
        return try await keyring(tenant: tenant)
    }

    /// A scheduled rotation, if the tenant's newest key is older than `dueAfterSeconds`
    /// (another instance may have rotated it meanwhile): the next key is published now and
    /// signs ``rotationLeadSeconds`` later. Returns whether it rotated.
    @discardableResult
    public func scheduleRotation(tenant: TenantScope, dueAfterSeconds: Int) async throws -> Bool {
        let settings = try await tenants.settings(tenant: tenant)
        let rotated = try await keys.activate(
            tenant: tenant, key: seal(generateKey(settings.signingAlgorithm), tenant: tenant),
            activation: .scheduled(leadSeconds: rotationLeadSeconds, dueAfterSeconds: dueAfterSeconds),
            publishRetiredSeconds: settings.idTokenLifetimeSeconds + 300, actor: "system", at: clock.now().date)
        return rotated
    }

    /// Every key with its state (no private parts), for `GET …/keys`.
    public func list(tenant: TenantScope) async throws -> [StoredSigningKey] {
        _ = try await keyring(tenant: tenant)
        return try await keys.all(tenant: tenant)
    }

    /// A new key, made on NIO's blocking-work pool: an RSA-2048 key takes tens to hundreds
    /// of milliseconds of CPU, which must not hold up the threads serving requests.
    public static func generate(_ algorithm: TenantSettings.SigningAlgorithm) async throws -> SigningKey {
        try await NIOThreadPool.singleton.runIfActive { try SigningKey.generate(algorithm) }
    }

    private func seal(_ key: SigningKey, tenant: TenantScope) throws -> StoredSigningKey {
        StoredSigningKey(
            kid: key.kid, algorithm: key.algorithm.rawValue, publicJWK: key.publicJWK,
            sealedPrivateKey: try masterKey.seal(Array(key.privateMaterial.utf8), context: Self.context(tenant, key.kid)),
            createTime: clock.now().date, retireTime: nil)
    }

    private func open(_ stored: StoredSigningKey, tenant: TenantScope) throws -> SigningKey {
        guard let algorithm = TenantSettings.SigningAlgorithm(rawValue: stored.algorithm) else {
            throw AuthError(.internalError)
        }
        let material = try masterKey.open(stored.sealedPrivateKey, context: Self.context(tenant, stored.kid))
        return SigningKey(
            kid: stored.kid, algorithm: algorithm, publicJWK: stored.publicJWK,
            privateMaterial: String(decoding: material, as: UTF8.self))
    }

    /// The AES-GCM associated data binding a sealed key to its row.
    static func context(_ tenant: TenantScope, _ kid: String) -> String { "portcullis-signing-key:\(tenant.key):\(kid)" }

    public func invalidate(_ event: InvalidationEvent) {
        switch event {
        case .signingKeys(let tenant): cache.invalidate(tenant.key)
        case .tenant(let id, let version) where version == 0: cache.invalidate(id)
        default: return
        }
    }

    /// Forward auth verifies with it through a database outage.
    public var keptThroughOutage: Bool { true }

    /// Keeps what it drops as last known: a flush just before an outage must not leave
    /// forward auth without keys for it.
    public func invalidateAll() {
        cache.invalidateAll(keepingLastKnown: true)
    }
}
