/// How imported password hashes were made: the `hashAlgorithm` and its parameters of an
/// Identity Toolkit `accounts:batchCreate` (UploadAccount) request, or of the hash
/// configuration `firebase auth:import` is given (`--hash-algo`, `--hash-key`,
/// `--salt-separator`, `--rounds`, `--mem-cost`, …).
///
/// Only the algorithms Portcullis verifies are accepted, each with the parameters it uses.
/// Imported hashes are verified on the hashing pool every tenant shares, so each
/// algorithm's work per verification is bounded here, as a tenant's own scrypt parameters
/// are (``ScryptParameters/maximumWork``): a tenant admin cannot make one sign-in starve
/// the others' (bcrypt's cost, which each hash carries, is checked when it is imported).
public enum PasswordHashConfig: Sendable, Equatable {
    /// Firebase's modified scrypt: scrypt(password, salt ‖ `saltSeparator`, N = 2^`memoryCost`,
    /// r = `rounds`, p = 1) keys AES-256-CTR, which encrypts `signerKey` into the hash.
    case firebaseScrypt(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memoryCost: Int)
    /// RFC 7914 scrypt(password, salt, N = `cpuMemCost`, r = `blockSize`, p = `parallelization`), `dkLen` bytes.
    case standardScrypt(cpuMemCost: Int, blockSize: Int, parallelization: Int, dkLen: Int)
    /// bcrypt: each imported hash is a whole `$2a$`/`$2b$`/`$2y$` string carrying its own cost and salt.
    case bcrypt
    /// PBKDF2-HMAC-SHA256(password, salt, `rounds`); the digest is as long as the imported hash.
    case pbkdf2SHA256(rounds: Int)
    /// HMAC-SHA256 keyed with `key` (the request's `signerKey`) of the password and the salt,
    /// concatenated in `order`.
    ///
    /// Without a `passwordHashOrder` Identity Toolkit hashes password ‖ salt: firebase-admin's
    /// own integration test imports HMAC_SHA256 hashes made as HMAC(key, password + salt) and
    /// signs in with them (unlike its plain SHA256, which is salt + password). firebase-tools'
    /// `--hash-input-order PASSWORD_FIRST`/`SALT_FIRST` sends `PASSWORD_AND_SALT`/`SALT_AND_PASSWORD`.
    case hmacSHA256(key: [UInt8], order: PasswordHashOrder)

    /// The algorithms by their wire names.
    public enum Algorithm: String, Sendable, CaseIterable {
        /// Firebase's modified scrypt.
        case scrypt = "SCRYPT"
        /// RFC 7914 scrypt.
        case standardScrypt = "STANDARD_SCRYPT"
        /// bcrypt.
        case bcrypt = "BCRYPT"
        /// PBKDF2 with HMAC-SHA256.
        case pbkdf2SHA256 = "PBKDF2_SHA256"
        /// HMAC-SHA256.
        case hmacSHA256 = "HMAC_SHA256"
    }

    /// Which comes first in the message an HMAC (or plain digest) algorithm hashes.
    public enum PasswordHashOrder: String, Sendable, CaseIterable {
        /// salt ‖ password.
        case saltAndPassword = "SALT_AND_PASSWORD"
        /// password ‖ salt.
        case passwordAndSalt = "PASSWORD_AND_SALT"
    }

    /// Firebase's limits on its own scrypt (the Admin SDKs' and firebase-tools' checks):
    /// N = 2^14 and r = 8 at most, which is the daemon's default scrypt work.
    public static let firebaseScryptRounds = 1...8
    /// See ``firebaseScryptRounds``.
    public static let firebaseScryptMemoryCost = 1...14
    /// Identity Toolkit's limit on PBKDF2 rounds; 0 rounds is no PBKDF2 at all.
    public static let pbkdf2Rounds = 1...120_000
    /// The highest bcrypt cost (log2 of its rounds) an imported hash may carry, checked when
    /// it is imported and again when it is verified.
    ///
    /// No imported hash may cost more to verify than the largest scrypt a tenant may choose
    /// (`ScryptParameters.maximumWork`): the hashing pool is shared, and a wrong guess at a
    /// costlier hash would buy an attacker more of it than any tenant's own setting allows.
    /// Measured here (BENCHMARKS.md, "What an imported hash costs"): cost 13 takes 0.74 × that
    /// scrypt, cost 14 1.47 ×.
    public static let maximumBcryptCost = 13
    /// The most HMAC-SHA256 block computations one imported PBKDF2 hash may take to verify:
    /// `rounds` × its digest's 32-byte blocks. 120,000 rounds (Identity Toolkit's limit)
    /// for a 256-byte digest, which measured 0.61 × the largest scrypt a tenant may choose
    /// (BENCHMARKS.md); a 512-byte digest at 120,000 rounds (1.22 ×) is refused.
    public static let maximumPBKDF2Blocks = 120_000 * 8

    /// `rounds` × the 32-byte blocks of a `digestBytes` digest, when within
    /// ``maximumPBKDF2Blocks``.
    public static func pbkdf2CostIsBounded(rounds: Int, digestBytes: Int) -> Bool {
        rounds * ((digestBytes + 31) / 32) <= maximumPBKDF2Blocks
    }
    /// The shortest digest a stored hash may have when its length is free (PBKDF2, standard
    /// scrypt's `dkLen`, Firebase's signer key): verification compares as many bytes as
    /// are stored, so a 1-byte digest would match one password in 256.
    public static let minimumDigestBytes = 16
    /// Bounds keys, separators and digests, which are stored with every imported hash.
    public static let maximumParameterBytes = 1024

    /// Reads and validates the fields of an UploadAccount request. Fields an algorithm does
    /// not use are ignored, as Identity Toolkit does; `passwordHashOrder` (HMAC_SHA256 only) defaults to
    /// ``PasswordHashOrder/passwordAndSalt``, as Identity Toolkit's does (see ``hmacSHA256(key:order:)``).
    ///
    /// Throws `MISSING_HASH_ALGORITHM`, `INVALID_HASH_ALGORITHM` (also for Identity Toolkit's
    /// algorithms Portcullis does not verify: MD5, SHA*, HMAC_SHA1, PBKDF_SHA1, ARGON2, …),
    /// or the `INVALID_HASH_*` code of the first parameter out of range.
    public init(
        hashAlgorithm: String?, signerKey: [UInt8]? = nil, saltSeparator: [UInt8]? = nil, rounds: Int? = nil,
        memoryCost: Int? = nil, cpuMemCost: Int? = nil, blockSize: Int? = nil, parallelization: Int? = nil,
        dkLen: Int? = nil, passwordHashOrder: String? = nil
    ) throws(AuthError) {
        guard let hashAlgorithm, !hashAlgorithm.isEmpty else { throw AuthError(.missingHashAlgorithm) }
        guard let algorithm = Algorithm(rawValue: hashAlgorithm) else {
            throw AuthError(
                .invalidHashAlgorithm,
                detail: "supported: \(Algorithm.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let config: PasswordHashConfig
        switch algorithm {
        case .scrypt:
            guard let rounds else { throw Self.outOfRange(.invalidHashRounds, "rounds", Self.firebaseScryptRounds) }
            guard let memoryCost else {
                throw Self.outOfRange(.invalidHashMemoryCost, "memoryCost", Self.firebaseScryptMemoryCost)
            }
            config = .firebaseScrypt(
                signerKey: signerKey ?? [], saltSeparator: saltSeparator ?? [], rounds: rounds, memoryCost: memoryCost)
        case .standardScrypt:
            guard let cpuMemCost else { throw AuthError(.invalidHashMemoryCost, detail: "cpuMemCost is required") }
            guard let blockSize else { throw AuthError(.invalidHashBlockSize, detail: "blockSize is required") }
            guard let parallelization else {
                throw AuthError(.invalidHashParallelization, detail: "parallelization is required")
            }
            guard let dkLen else { throw AuthError(.invalidHashDerivedKeyLength, detail: "dkLen is required") }
            config = .standardScrypt(cpuMemCost: cpuMemCost, blockSize: blockSize, parallelization: parallelization, dkLen: dkLen)
        case .bcrypt:
            config = .bcrypt
        case .pbkdf2SHA256:
            guard let rounds else { throw Self.outOfRange(.invalidHashRounds, "rounds", Self.pbkdf2Rounds) }
            config = .pbkdf2SHA256(rounds: rounds)
        case .hmacSHA256:
            let order: PasswordHashOrder
            switch passwordHashOrder {
            case nil, "", "UNSPECIFIED_ORDER"?: order = .passwordAndSalt
            case let name?:
                guard let named = PasswordHashOrder(rawValue: name) else {
                    throw AuthError(
                        .invalidArgument,
                        detail: "Invalid value at 'passwordHashOrder' (SALT_AND_PASSWORD or PASSWORD_AND_SALT)")
                }
                order = named
            }
            config = .hmacSHA256(key: signerKey ?? [], order: order)
        }
        self = try config.validated()
    }

    /// The algorithm's wire name.
    public var algorithm: Algorithm {
        switch self {
        case .firebaseScrypt: .scrypt
        case .standardScrypt: .standardScrypt
        case .bcrypt: .bcrypt
        case .pbkdf2SHA256: .pbkdf2SHA256
        case .hmacSHA256: .hmacSHA256
        }
    }

    /// This configuration when its parameters are within Firebase's and Portcullis' bounds;
    /// the `INVALID_HASH_*` code of the first one that is not. The importer checks again
    /// whatever it is given, so a value built from the cases directly is bounded too.
    public func validated() throws(AuthError) -> PasswordHashConfig {
        switch self {
        case .firebaseScrypt(let signerKey, let saltSeparator, let rounds, let memoryCost):
            guard (Self.minimumDigestBytes...Self.maximumParameterBytes).contains(signerKey.count) else {
                throw AuthError(
                    .invalidHashKey,
                    detail: "signerKey: \(Self.minimumDigestBytes) to \(Self.maximumParameterBytes) bytes (Firebase's are 64)")
            }
            guard saltSeparator.count <= Self.maximumParameterBytes else {
                throw AuthError(.invalidHashSaltSeparator, detail: "saltSeparator: at most \(Self.maximumParameterBytes) bytes")
            }
            guard Self.firebaseScryptRounds.contains(rounds) else {
                throw Self.outOfRange(.invalidHashRounds, "rounds", Self.firebaseScryptRounds)
            }
            guard Self.firebaseScryptMemoryCost.contains(memoryCost) else {
                throw Self.outOfRange(.invalidHashMemoryCost, "memoryCost", Self.firebaseScryptMemoryCost)
            }
        case .standardScrypt(let cpuMemCost, let blockSize, let parallelization, let dkLen):
            // scrypt's N is a power of two above 1; the same ranges as a tenant's own scrypt.
            guard cpuMemCost > 1, cpuMemCost <= 1 << 20, cpuMemCost & (cpuMemCost - 1) == 0 else {
                throw AuthError(.invalidHashMemoryCost, detail: "cpuMemCost: a power of two from 2 to 2^20")
            }
            guard (1...32).contains(blockSize) else { throw Self.outOfRange(.invalidHashBlockSize, "blockSize", 1...32) }
            guard (1...16).contains(parallelization) else {
                throw Self.outOfRange(.invalidHashParallelization, "parallelization", 1...16)
            }
            guard (Self.minimumDigestBytes...Self.maximumParameterBytes).contains(dkLen) else {
                throw Self.outOfRange(.invalidHashDerivedKeyLength, "dkLen", Self.minimumDigestBytes...Self.maximumParameterBytes)
            }
            guard 128 * blockSize * cpuMemCost <= ScryptParameters.maximumMemoryBytes,
                cpuMemCost * blockSize * parallelization <= ScryptParameters.maximumWork
            else {
                throw AuthError(
                    .invalidHashParameter,
                    detail: "standard scrypt: at most 64 MiB (128 * blockSize * cpuMemCost) and at most 16 times "
                        + "the default scrypt's work (cpuMemCost * blockSize * parallelization <= \(ScryptParameters.maximumWork))")
            }
        case .bcrypt:
            break
        case .pbkdf2SHA256(let rounds):
            guard Self.pbkdf2Rounds.contains(rounds) else { throw Self.outOfRange(.invalidHashRounds, "rounds", Self.pbkdf2Rounds) }
        case .hmacSHA256(let key, _):
            guard (1...Self.maximumParameterBytes).contains(key.count) else {
                throw AuthError(.invalidHashKey, detail: "signerKey: 1 to \(Self.maximumParameterBytes) bytes")
            }
        }
        return self
    }

    private static func outOfRange(_ code: AuthError.Code, _ field: String, _ range: ClosedRange<Int>) -> AuthError {
        AuthError(code, detail: "\(field): \(range.lowerBound) to \(range.upperBound)")
    }
}
