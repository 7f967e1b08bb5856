import CLibCrypto

/// RS256 (RSASSA-PKCS1-v1_5 with SHA-256) on the system's OpenSSL 3 libcrypto.
///
/// The private key is parsed once into an `EVP_PKEY`, and one `EVP_MD_CTX` per operation
/// is set up for it once: SHA-256, PKCS#1 v1.5 padding. Each signature or verification
/// copies that template into a context of its own and frees it before returning. Setting
/// a context up fetches the algorithms from OpenSSL's provider store each time, 15–25 %
/// of an RSA-2048 verification; copying one does not (BENCHMARKS.md, issue 12).
///
/// `@unchecked Sendable` because it holds C pointers, and sharing them is safe: nothing
/// is modified after `init`. Threads only read the templates (`EVP_MD_CTX_copy_ex` and
/// the `EVP_PKEY_CTX_dup` under it take them `const` and bump reference counts
/// atomically), and OpenSSL 3 lets threads sign and verify with one `EVP_PKEY` at the
/// same time as long as each uses its own context (openssl-threads(7): "two threads can
/// calculate a signature using two different EVP_PKEY_CTX objects"). What OpenSSL
/// caches in the key on first use (Montgomery constants, blinding values) it fills
/// under its own locks.
public final class RSASigner: TokenSigner, @unchecked Sendable {
    /// The `EVP_PKEY`, owned: freed in `deinit`.
    let key: OpaquePointer
    /// The set-up contexts that each call copies; never used themselves.
    private let signing: OpaquePointer
    private let verifying: OpaquePointer
    private let signatureSize: Int

    /// Loads a PEM private key (PKCS#1 or PKCS#8, unencrypted); `invalidKey` unless it
    /// parses and is an RSA key of at least 2048 bits.
    public convenience init(pem: String) throws(SigningFailure) {
        let loaded = Array(pem.utf8).withUnsafeBytes { bytes -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            // Stored keys are never encrypted; a callback that gives no passphrase keeps
            // OpenSSL's default one from prompting on a terminal if one ever were.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let loaded else {
            ERR_clear_error()
            throw .invalidKey
        }
        try self.init(taking: loaded)
    }

    /// Takes ownership of `key` (freed here if it is not an RSA key of at least 2048 bits,
    /// or if OpenSSL cannot set up RS256 with it).
    init(taking key: OpaquePointer) throws(SigningFailure) {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA, EVP_PKEY_get_bits(key) >= 2048 else {
            EVP_PKEY_free(key)
            throw .invalidKey
        }
        let signing = Self.template(EVP_DigestSignInit_ex, key)
        let verifying = Self.template(EVP_DigestVerifyInit_ex, key)
        guard let signing, let verifying else {
            let failure = SigningFailure.libcrypto("setting up RS256")
            EVP_MD_CTX_free(signing)
            EVP_MD_CTX_free(verifying)
            EVP_PKEY_free(key)
            throw failure
        }
        self.key = key
        self.signing = signing
        self.verifying = verifying
        self.signatureSize = Int(EVP_PKEY_get_size(key))
    }

    deinit {
        EVP_MD_CTX_free(signing)
        EVP_MD_CTX_free(verifying)
        EVP_PKEY_free(key)
    }

    /// The RS256 signature of `input`: SHA-256, PKCS#1 v1.5 padding, as long as the modulus.
    public func sign(_ input: [UInt8]) throws(SigningFailure) -> [UInt8] {
        guard let context = Self.copy(signing) else { throw .libcrypto("EVP_MD_CTX_copy_ex") }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: signatureSize)
        var length = signature.count
        guard EVP_DigestSign(context, &signature, &length, input, input.count) == 1 else {
            throw .libcrypto("EVP_DigestSign")
        }
        return Array(signature.prefix(length))
    }

    /// Whether `signature` is this key's RS256 signature of `input`.
    public func verify(_ signature: [UInt8], signs input: [UInt8]) -> Bool {
        guard let context = Self.copy(verifying) else {
            ERR_clear_error()
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerify(context, signature, signature.count, input, input.count) == 1 else {
            // A bad signature leaves OpenSSL's reasons on this thread's error queue;
            // nobody reads them, and a later failure's report must not start with them.
            ERR_clear_error()
            return false
        }
        return true
    }

    /// The shape shared by `EVP_DigestSignInit_ex` and `EVP_DigestVerifyInit_ex`.
    private typealias DigestInit = (
        OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<CChar>?, OpaquePointer?,
        UnsafePointer<CChar>?, OpaquePointer?, UnsafePointer<OSSL_PARAM>?
    ) -> Int32

    /// A new `EVP_MD_CTX` set up by `initialize` for SHA-256 with PKCS#1 v1.5 padding and `key`.
    private static func template(_ initialize: DigestInit, _ key: OpaquePointer) -> OpaquePointer? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        var keyContext: OpaquePointer?
        guard initialize(context, &keyContext, "SHA256", nil, nil, key, nil) == 1,
            EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
        else {
            EVP_MD_CTX_free(context)
            return nil
        }
        // Each copy is used for one message: without this flag (copied with the rest)
        // the final step would first duplicate the whole operation, so that more data
        // could still be added.
        EVP_MD_CTX_set_flags(context, EVP_MD_CTX_FLAG_FINALISE)
        return context
    }

    /// A context of the caller's own, copied from `template`.
    private static func copy(_ template: OpaquePointer) -> OpaquePointer? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        guard EVP_MD_CTX_copy_ex(context, template) == 1 else {
            EVP_MD_CTX_free(context)
            return nil
        }
        return context
    }
}
