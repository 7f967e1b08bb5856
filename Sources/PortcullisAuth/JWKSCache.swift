import Foundation
public import PortcullisCore
public import PortcullisCrypto
import PortcullisJSON
public import PortcullisOutbound

/// Identity providers' public keys, per JWKS URL, fetched through the outbound client and
/// kept for as long as the provider's `Cache-Control: max-age` says.
///
/// - The lifetime is the answer's `max-age`, bounded to ``Limits/minimumLifetime`` …
///   ``Limits/maximumLifetime`` (a provider saying `no-store` or `max-age=0` would otherwise
///   make every sign-in a fetch; one saying a year would pin a retired key), and
///   ``Limits/defaultLifetime`` when it says nothing.
/// - One fetch per URL at a time: callers arriving while a fetch is in flight await that
///   fetch (single-flight), so a burst of sign-ins against a cold cache costs one request.
/// - A `kid` the cached set lacks triggers one refetch (the provider may have rotated),
///   but not within ``Limits/refetchInterval`` of the previous fetch of that URL: a stream
///   of tokens with invented `kid`s cannot make the gateway hammer the provider.
/// - Entries that `VerificationKey.init(jwk:)` cannot use (encryption keys, HMAC, small
///   RSA, other curves) are skipped; the rest of the set still serves.
///
/// Time is the injected `WallClock`, so tests move it instead of sleeping.
public actor JWKSCache {
    /// The most keys kept of one set: a provider publishes a handful; a tenant admin's
    /// endpoint serving thousands must not make every sign-in try them all.
    static let maximumKeys = 50

    /// The cache's time rules.
    public struct Limits: Sendable {
        /// The shortest time a key set is kept, whatever `max-age` says (seconds).
        public var minimumLifetime: Int64
        /// The longest time a key set is kept, whatever `max-age` says (seconds).
        public var maximumLifetime: Int64
        /// How long a key set is kept when the answer has no `max-age` (seconds).
        public var defaultLifetime: Int64
        /// The least time between two fetches of one URL prompted by unknown `kid`s (seconds).
        public var refetchInterval: Int64

        /// Limits; the defaults are 60 s … 1 day, 1 h without `max-age`, refetch at most every 30 s.
        public init(
            minimumLifetime: Int64 = 60, maximumLifetime: Int64 = 86_400, defaultLifetime: Int64 = 3_600,
            refetchInterval: Int64 = 30
        ) {
            self.minimumLifetime = minimumLifetime
            self.maximumLifetime = maximumLifetime
            self.defaultLifetime = defaultLifetime
            self.refetchInterval = refetchInterval
        }
    }

    /// Why no key set could be had: the fetch failed, or the answer was not a JWKS.
    public struct Unavailable: Error, Sendable, Equatable, CustomStringConvertible {
        /// The reason, naming the host (never the URL's query).
        public var reason: String
        /// The outbound failure behind it, when the fetch itself failed.
        public var failure: OutboundFailure?

        public var description: String { reason }
    }

    private struct Entry: Sendable {
        let keys: [VerificationKey]
        let fetchedAt: Timestamp
        let expiresAt: Timestamp
    }

    private let client: OutboundHTTPClient
    private let clock: any WallClock
    private let limits: Limits
    private var entries: [String: Entry] = [:]
    private var inFlight: [String: Task<Result<Entry, Unavailable>, Never>] = [:]
    /// When an unknown `kid` last prompted a refetch of each URL, successful or not: the
    /// rate limit holds while the provider is failing too.
    private var refetchedAt: [String: Timestamp] = [:]
    /// Bounds memory when tenants configure many distinct JWKS URLs.
    private let maximumEntries = 1_024

    /// A cache fetching through `client`, reading time from `clock`.
    public init(client: OutboundHTTPClient, clock: any WallClock, limits: Limits = Limits()) {
        self.client = client
        self.clock = clock
        self.limits = limits
    }

    /// The keys of the JWKS at `url` that may have signed a token with header `kid`: those
    /// with that `kid`, or every key when the token names none. Refetches once when the
    /// `kid` is unknown (subject to ``Limits/refetchInterval``); an empty answer means the
    /// provider does not (yet) publish such a key.
    public func keys(url: String, kid: String?) async throws(Unavailable) -> [VerificationKey] {
        let entry = try await current(url: url)
        let matching = Self.keys(in: entry, kid: kid)
        guard matching.isEmpty, kid != nil else { return matching }
        let now = clock.now()
        let last = max(entry.fetchedAt, refetchedAt[url] ?? entry.fetchedAt)
        guard now >= last.adding(seconds: limits.refetchInterval) else { return [] }
        refetchedAt[url] = now
        return Self.keys(in: try await fetch(url: url), kid: kid)
    }

    /// Forgets every cached key set (tests; an operator's cache flush).
    public func removeAll() {
        entries.removeAll()
        refetchedAt.removeAll()
    }

    private static func keys(in entry: Entry, kid: String?) -> [VerificationKey] {
        guard let kid else { return entry.keys }
        return entry.keys.filter { $0.kid == kid }
    }

    /// The unexpired entry for `url`, fetching it when there is none.
    private func current(url: String) async throws(Unavailable) -> Entry {
        if let entry = entries[url], clock.now() < entry.expiresAt { return entry }
        return try await fetch(url: url)
    }

    /// Joins the fetch of `url` in flight, or starts one.
    private func fetch(url: String) async throws(Unavailable) -> Entry {
        if let running = inFlight[url] { return try await running.value.get() }
        let client = client
        let clock = clock
        let limits = limits
        let task = Task { await Self.download(url: url, client: client, clock: clock, limits: limits) }
        inFlight[url] = task
        let result = await task.value
        inFlight[url] = nil
        if case .success(let entry) = result {
            if entries.count >= maximumEntries { evictExpired() }
            if entries.count >= maximumEntries { removeAll() }
            entries[url] = entry
        }
        return try result.get()
    }

    private func evictExpired() {
        let now = clock.now()
        entries = entries.filter { now < $0.value.expiresAt }
        refetchedAt = refetchedAt.filter { entries[$0.key] != nil }
    }

    /// One GET of the JWKS, read into keys with its lifetime.
    private static func download(
        url: String, client: OutboundHTTPClient, clock: any WallClock, limits: Limits
    ) async
        -> Result<Entry, Unavailable>
    {
        let response: OutboundResponse
        do {
            response = try await client.get(url, headers: [("Accept", "application/json")])
        } catch {
            return .failure(Unavailable(reason: error.description, failure: error))
        }
        guard case .object(let document)? = try? JSONValue.parse(response.body),
            case .array(let entries)? = document["keys"]
        else {
            let host = URL(string: url)?.host ?? "the provider"
            return .failure(Unavailable(reason: "\(host) did not answer with a JWKS (a JSON object with keys)"))
        }
        let lifetime = response.maxAgeSeconds.map {
            min(max(Int64(clamping: $0), limits.minimumLifetime), limits.maximumLifetime)
        }
        let now = clock.now()
        return .success(
            Entry(
                keys: Array(entries.lazy.compactMap(VerificationKey.init(jwk:)).prefix(Self.maximumKeys)), fetchedAt: now,
                expiresAt: now.adding(seconds: lifetime ?? limits.defaultLifetime)))
    }
}
