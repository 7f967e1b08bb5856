/// scrypt's cost parameters: N = 2^`logN`, block size `r`, parallelism `p`.
public struct ScryptParameters: Sendable, Hashable {
    /// log2 of N.
    public var logN: Int
    /// Block size.
    public var r: Int
    /// Parallelism.
    public var p: Int

    /// N = 2^14, r = 8, p = 1 (DESIGN.md §3's default): 16 MiB and ~40 ms per hash here.
    public static let standard = ScryptParameters(logN: 14, r: 8, p: 1)

    /// The most memory one hash may take when a tenant chooses (128 · r · N bytes): 64 MiB,
    /// so a hashing thread per core stays within a small daemon's budget.
    public static let maximumMemoryBytes = 64 << 20

    /// The most work one hash may take when a tenant chooses (N · r · p): 16 × the default's.
    /// The hashing pool is shared by every tenant, so a tenant's cost is everyone's latency;
    /// the memory bound alone would let p = 16 make a hash 64 × the default's work.
    public static let maximumWork = 16 * (1 << standard.logN) * standard.r * standard.p

    /// N · r · p.
    public var work: Int { (1 << logN) * r * p }

    /// Creates parameters.
    public init(logN: Int, r: Int, p: Int) {
        self.logN = logN
        self.r = r
        self.p = p
    }
}

/// `scryptParameters`: absent members take the default's; a choice over the bounds is
/// INVALID_ARGUMENT.
extension ScryptParameters: Codable {
    private enum Field: String, CodingKey { case logN, r, p }

    public init(from decoder: any Decoder) throws {
        let parameters = try decoder.container(keyedBy: Field.self)
        let defaults = Self.standard
        self.init(
            logN: try parameters.decodeIfPresent(Int.self, forKey: .logN) ?? defaults.logN,
            r: try parameters.decodeIfPresent(Int.self, forKey: .r) ?? defaults.r,
            p: try parameters.decodeIfPresent(Int.self, forKey: .p) ?? defaults.p)
        guard (10...20).contains(logN), (1...32).contains(r), (1...16).contains(p),
            128 * r << logN <= Self.maximumMemoryBytes, work <= Self.maximumWork
        else {
            throw AuthError(
                .invalidArgument,
                detail: "scryptParameters: logN 10 to 20, r 1 to 32, p 1 to 16, at most 64 MiB (128 * r * 2^logN) "
                    + "and at most 16 times the default's work (2^logN * r * p <= \(Self.maximumWork))")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var parameters = encoder.container(keyedBy: Field.self)
        try parameters.encode(logN, forKey: .logN)
        try parameters.encode(r, forKey: .r)
        try parameters.encode(p, forKey: .p)
    }
}
