/// The JWKS of each issuer, cached for the gateway's `max-age` and fetched single-flight.
///
/// - A cold or expired set is fetched once however many verifications ask at the same time:
///   they all await the one request in flight.
/// - An unknown `kid` asks for one refetch (``refreshed(_:tenant:after:)``): answered by a
///   newer set when there is one, by the fetch in flight when there is one, else by a new
///   fetch — unless one such refetch happened within
///   ``VerifierConfiguration/unknownKeyRefetchInterval``.
/// - A failed fetch is remembered (1 s; a tenant unknown to the gateway for the refetch
///   interval), so an unreachable gateway is not asked once per token. While it fails, the
///   previous set, if any, keeps serving for up to an hour.
actor JWKSCache {
    /// The most issuers cached; with ``AcceptedTenants/anyTenant``, tokens naming made-up
    /// tenants must not grow the cache without bound.
    static let maximumEntries = 10_000
    /// How long a failure of the gateway is remembered.
    static let failureBackoff = Duration.seconds(1)
    /// How long the last good set serves while refreshing it fails.
    static let staleIfErrorLimit = Duration.seconds(3600)

    private struct InFlight {
        let generation: Int
        let task: Task<Result<GatewayClient.FetchedKeys, TokenVerificationError>, Never>
    }

    private struct Entry {
        var keySet: KeySet?
        var freshUntil: ContinuousClock.Instant
        var staleUntil: ContinuousClock.Instant
        var inFlight: InFlight?
        var lastUnknownKeyRefetch: ContinuousClock.Instant?
        var failure: (error: TokenVerificationError, until: ContinuousClock.Instant)?
    }

    private let gateway: GatewayClient
    private let unknownKeyRefetchInterval: Duration
    /// The time of the monotonic clock: `ContinuousClock.now`, or a test's.
    private let clockNow: @Sendable () -> ContinuousClock.Instant
    private var entries: [String: Entry] = [:]
    private var lastGeneration = 0

    init(gateway: GatewayClient, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.gateway = gateway
        self.unknownKeyRefetchInterval = gateway.configuration.unknownKeyRefetchInterval
        self.clockNow = now
    }

    /// The keys at `url` (the JWKS of `tenant`), from the cache while fresh.
    func keySet(_ url: String, tenant: String?) async throws(TokenVerificationError) -> KeySet {
        if let entry = entries[url] {
            let now = clockNow()
            if let keySet = entry.keySet, entry.freshUntil > now { return keySet }
            if let failure = entry.failure, failure.until > now {
                if let keySet = entry.keySet, entry.staleUntil > now { return keySet }
                throw failure.error
            }
        }
        return try await fetch(url, tenant: tenant)
    }

    /// The keys at `url` after `seen` lacked a token's `kid`: a newer set, or `nil` when no
    /// refetch is allowed yet (an unknown-`kid` refetch happened within the interval).
    func refreshed(_ url: String, tenant: String?, after seen: KeySet) async throws(TokenVerificationError) -> KeySet? {
        let entry = entries[url]
        if let current = entry?.keySet, current.generation > seen.generation { return current }
        if entry?.inFlight != nil { return try await fetch(url, tenant: tenant) }
        let now = clockNow()
        if let last = entry?.lastUnknownKeyRefetch, now - last < unknownKeyRefetchInterval { return nil }
        entries[url, default: Self.emptyEntry(now)].lastUnknownKeyRefetch = now
        return try await fetch(url, tenant: tenant)
    }

    /// Joins the fetch of `url` in flight, or starts one.
    private func fetch(_ url: String, tenant: String?) async throws(TokenVerificationError) -> KeySet {
        let flight: InFlight
        if let current = entries[url]?.inFlight {
            flight = current
        } else {
            lastGeneration += 1
            let generation = lastGeneration
            let gateway = self.gateway
            flight = InFlight(generation: generation, task: Task { await gateway.fetchJWKS(url, tenant: tenant, generation: generation) })
            if entries[url] == nil { makeRoom() }
            entries[url, default: Self.emptyEntry(clockNow())].inFlight = flight
        }
        let outcome = await flight.task.value
        // The first of the waiters to resume records the outcome.
        if entries[url]?.inFlight?.generation == flight.generation { record(outcome, for: url) }
        switch outcome {
        case .success(let fetched): return fetched.keySet
        case .failure(let error):
            if let entry = entries[url], let keySet = entry.keySet, entry.staleUntil > clockNow(), error != .unknownTenant {
                return keySet
            }
            throw error
        }
    }

    private func record(_ outcome: Result<GatewayClient.FetchedKeys, TokenVerificationError>, for url: String) {
        guard var entry = entries[url] else { return }
        let now = clockNow()
        entry.inFlight = nil
        switch outcome {
        case .success(let fetched):
            entry.keySet = fetched.keySet
            entry.freshUntil = now + fetched.lifetime
            entry.staleUntil = now + max(fetched.lifetime, Self.staleIfErrorLimit)
            entry.failure = nil
        case .failure(let error):
            let backoff = error == .unknownTenant ? unknownKeyRefetchInterval : Self.failureBackoff
            entry.failure = (error, now + backoff)
            if error == .unknownTenant { entry.keySet = nil }
        }
        entries[url] = entry
    }

    /// Drops entries when the cache is full: first those that are neither fresh nor being
    /// fetched, then any not being fetched.
    private func makeRoom() {
        guard entries.count >= Self.maximumEntries else { return }
        let now = clockNow()
        entries = entries.filter { $0.value.inFlight != nil || $0.value.freshUntil > now }
        while entries.count >= Self.maximumEntries, let victim = entries.first(where: { $0.value.inFlight == nil })?.key {
            entries[victim] = nil
        }
    }

    private static func emptyEntry(_ now: ContinuousClock.Instant) -> Entry {
        Entry(keySet: nil, freshUntil: now, staleUntil: now, inFlight: nil, lastUnknownKeyRefetch: nil, failure: nil)
    }
}
