public import CoreMetrics
public import PortcullisCore
import Synchronization

/// Password hashing as the account service needs it: each tenant's scrypt
/// parameters, always on the ``HashingPool`` in the tenant's turn, and a verification that
/// costs one hash whether or not the account exists.
public final class PasswordHashingService: Sendable {
    /// Parameters for tenants that set none.
    public let defaultParameters: ScryptParameters
    private let pool: HashingPool
    /// `portcullis_password_hash_duration_seconds`: from submission to the pool until the
    /// hash is done, waiting included (what a sign-in feels; refusals are not recorded).
    private let latency: Timer
    /// One hash of a random secret per parameter set, verified against when an email is
    /// unknown, so both answers take as long as the tenant's real hashes.
    private let dummyHashes = Mutex<[ScryptParameters: String]>([:])

    /// A service hashing with `defaultParameters` unless a tenant says otherwise, recording
    /// its latency with `metrics`.
    public init(
        defaultParameters: ScryptParameters = .standard, pool: HashingPool, metrics: any MetricsFactory = NOOPMetricsHandler.instance
    ) {
        self.defaultParameters = defaultParameters
        self.pool = pool
        latency = Timer(label: "portcullis_password_hash_duration_seconds", dimensions: [], factory: metrics)
    }

    /// The hasher for new hashes of the tenant with `settings`.
    public func hasher(for settings: TenantSettings) -> PasswordHasher {
        PasswordHasher(parameters: settings.scryptParameters ?? defaultParameters)
    }

    /// A new hash of `password` with the parameters of `tenant`, whose `settings` these are.
    ///
    /// `TOO_MANY_ATTEMPTS_TRY_LATER` at once when the tenant's share of the hashing pool is full.
    public func hash(_ password: String, settings: TenantSettings, tenant: TenantScope) async throws -> String {
        let hasher = hasher(for: settings)
        return try await onPool(tenant) { try hasher.hash(password) }
    }

    /// Whether no password has been hashed (nor waited to be) for `quiet` (``HashingPool/isQuiet(for:now:)``).
    public func isQuiet(for quiet: Duration) -> Bool { pool.isQuiet(for: quiet) }

    /// `TOO_MANY_ATTEMPTS_TRY_LATER` when `tenant`'s share of the hashing pool is full now: a
    /// sign-in asks before its lookup, so a flood's surplus costs no database work.
    public func requireRoom(tenant: TenantScope) throws(AuthError) {
        guard pool.hasRoom(for: tenant.key) else { throw AuthError(.tooManyAttemptsTryLater) }
    }

    /// Runs hashing work on the pool in `tenant`'s turn, refusing (rather than queueing) when
    /// the tenant's share is full.
    private func onPool<Value: Sendable>(
        _ tenant: TenantScope, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        do {
            let start = ContinuousClock.now
            let value = try await pool.run(for: tenant.key, work)
            let elapsed = (ContinuousClock.now - start).components
            latency.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
            return value
        } catch is HashingPool.Saturated {
            throw AuthError(.tooManyAttemptsTryLater)
        }
    }

    /// Whether `password` matches `stored`; with no stored hash, a dummy hash of the
    /// tenant's parameters is verified instead and the answer is `false`.
    ///
    /// `stored` may be an imported hash (``StoredPasswordHash``), verified on the pool with
    /// its own algorithm and cost, which its import bounded; the caller rehashes it after a
    /// match, as ``PasswordHasher/needsRehash(_:)`` says of every imported hash.
    /// `TOO_MANY_ATTEMPTS_TRY_LATER` at once when the tenant's share of the hashing pool is full.
    public func verify(
        _ password: String, against stored: String?, settings: TenantSettings, tenant: TenantScope
    ) async throws -> Bool {
        let hasher = hasher(for: settings)
        let candidate: String
        if let stored {
            candidate = stored
        } else if let dummy = dummyHashes.withLock({ $0[hasher.parameters] }) {
            candidate = dummy
        } else {
            let dummy = try await onPool(tenant) { try hasher.hash(SecretToken.random()) }
            dummyHashes.withLock { $0[hasher.parameters] = dummy }
            candidate = dummy
        }
        let matches = try await onPool(tenant) { hasher.verify(password, against: candidate) }
        return matches && stored != nil
    }
}
