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

    init(reader: JSONValue.Reader) throws(AuthError) {
        let defaults = Self.standard
        self.init(
            logN: try reader.int("logN") ?? defaults.logN, r: try reader.int("r") ?? defaults.r,
            p: try reader.int("p") ?? defaults.p)
        guard (10...20).contains(logN), (1...32).contains(r), (1...16).contains(p),
            128 * r << logN <= Self.maximumMemoryBytes, work <= Self.maximumWork
        else {
            throw AuthError(
                .invalidArgument,
                detail: "scryptParameters: logN 10 to 20, r 1 to 32, p 1 to 16, at most 64 MiB (128 * r * 2^logN) "
                    + "and at most 16 times the default's work (2^logN * r * p <= \(Self.maximumWork))")
        }
    }

    var json: JSONValue {
        .object(["logN": .integer(Int64(logN)), "r": .integer(Int64(r)), "p": .integer(Int64(p))])
    }
}
