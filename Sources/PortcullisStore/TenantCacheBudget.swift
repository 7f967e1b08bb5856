/// How the bytes of `cache.tenant_bytes` are shared among the caches of tenant state:
/// settings, keyrings and identity-provider configurations, each least-recently-used.
///
/// Fixed shares rather than one pool: each cache evicts its own oldest entries. Keyrings get
/// the largest share because a keyring with an RSA key weighs about four times a tenant's
/// settings; most tenants have no identity provider. Costs are estimates of the heap an entry
/// holds; `scripts/bench` reads them beside the daemon's RSS (BENCHMARKS.md).
public struct TenantCacheBudget: Sendable, Equatable {
    /// `cache.tenant_bytes`'s default: 64 MiB, about 10,000 tenants' settings and 6,000 (RS256)
    /// to 16,000 (ES256) keyrings.
    public static let defaultBytes = 64 << 20

    /// The whole budget.
    public var bytes: Int

    /// A budget of `bytes` (``defaultBytes`` unless given).
    public init(bytes: Int = Self.defaultBytes) {
        self.bytes = bytes
    }

    /// Tenant settings' share: a quarter.
    public var settings: Int { bytes / 4 }
    /// Keyrings' share: five eighths.
    public var keyrings: Int { bytes / 8 * 5 }
    /// Identity-provider configurations' share: an eighth.
    public var providers: Int { bytes / 8 }
}
