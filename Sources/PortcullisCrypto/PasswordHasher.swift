import CryptoExtras
import Foundation
public import PortcullisCore
import PortcullisJSON

/// scrypt password hashes, self-describing so parameters can change per tenant.
///
/// Encoded as `$scrypt$ln=14,r=8,p=1$<salt>$<hash>` (base64url): verification
/// reads the parameters from the stored hash, never from current settings.
public struct PasswordHasher: Sendable {
    /// The parameters new hashes are made with.
    public let parameters: ScryptParameters

    /// A hasher producing new hashes with `parameters`.
    public init(parameters: ScryptParameters = .standard) {
        self.parameters = parameters
    }

    /// Hashes with a fresh 16-byte salt. CPU-bound: call it on a ``HashingPool``.
    public func hash(_ password: String) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let derived = try Self.derive(password, salt: salt, parameters)
        return "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(Base64URL.encode(salt))$\(Base64URL.encode(derived))"
    }

    /// The derived key's length in new hashes, and the least a stored hash may have.
    public static let outputByteCount = 32

    /// Whether `password` matches `encoded` (compared in constant time); false for anything
    /// unparsable, and for a stored digest shorter than ``outputByteCount``: verification
    /// derives as many bytes as are stored, so a 1-byte digest would match one password
    /// in 256 (and an empty one, every password).
    ///
    /// `encoded` may also be an imported hash (``StoredPasswordHash``: Firebase scrypt,
    /// standard scrypt, bcrypt, PBKDF2-SHA256, HMAC-SHA256), verified with its own
    /// algorithm and parameters, whatever this hasher's.
    public func verify(_ password: String, against encoded: String) -> Bool {
        if let imported = StoredPasswordHash(parsing: encoded) { return imported.verify(password) }
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: true)
        guard fields.count == 4, fields[0] == "scrypt",
            let parameters = Self.parseParameters(fields[1]),
            let salt = Base64URL.decode(String(fields[2])), let expected = Base64URL.decode(String(fields[3])),
            expected.count >= Self.outputByteCount,
            let derived = try? Self.derive(password, salt: salt, parameters, length: expected.count)
        else { return false }
        return SecretToken.constantTimeEquals(derived, expected)
    }

    /// Whether a stored hash was made with other parameters than this hasher's, or is not
    /// this scrypt at all (every imported ``StoredPasswordHash``): rehash on sign-in.
    public func needsRehash(_ encoded: String) -> Bool {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: true)
        return fields.count != 4 || fields[0] != "scrypt" || Self.parseParameters(fields[1]) != parameters
    }

    /// Whether `encoded` is a stored hash this hasher can verify within the cost bounds an
    /// import accepts: the native scrypt (work and memory within `ScryptParameters`' limits)
    /// or one of ``StoredPasswordHash``'s imported formats. Export writes these texts and
    /// import takes them back as they are.
    public static func isVerifiable(_ encoded: String) -> Bool {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: true)
        if fields.count == 4, fields[0] == "scrypt", let parameters = parseParameters(fields[1]) {
            return parameters.work <= ScryptParameters.maximumWork
                && 128 * parameters.r * (1 << parameters.logN) <= ScryptParameters.maximumMemoryBytes
                && Base64URL.decode(String(fields[2])) != nil
                && (Base64URL.decode(String(fields[3]))?.count ?? 0) >= outputByteCount
        }
        return StoredPasswordHash(parsing: encoded) != nil
    }

    private static func parseParameters(_ text: Substring) -> ScryptParameters? {
        var values: [String: Int] = [:]
        for pair in text.split(separator: ",") {
            let kv = pair.split(separator: "=")
            guard kv.count == 2, let value = Int(kv[1]) else { return nil }
            values[String(kv[0])] = value
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"],
            (1...20).contains(logN), (1...32).contains(r), (1...16).contains(p)
        else { return nil }
        return ScryptParameters(logN: logN, r: r, p: p)
    }

    private static func derive(
        _ password: String, salt: [UInt8], _ parameters: ScryptParameters, length: Int = outputByteCount
    ) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: length, rounds: 1 << parameters.logN,
            blockSize: parameters.r, parallelism: parameters.p)
        return key.withUnsafeBytes { Array($0) }
    }
}
