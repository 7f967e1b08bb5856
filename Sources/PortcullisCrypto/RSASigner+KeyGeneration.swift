import CLibCrypto

extension RSASigner {
    /// A new RSA key pair of `bits` bits, public exponent 65537.
    static func generate(bits: Int32 = 2048) throws(SigningFailure) -> RSASigner {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw .libcrypto("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { throw .libcrypto("EVP_PKEY_generate") }
        return try RSASigner(taking: key)
    }

    /// The private key as unencrypted PKCS#8 PEM (`BEGIN PRIVATE KEY`), which ``init(pem:)``
    /// and swift-crypto both read.
    func pemRepresentation() throws(SigningFailure) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .libcrypto("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else { throw .libcrypto("PEM_write_bio_PrivateKey") }
        var pem = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        guard BIO_read(bio, &pem, Int32(pem.count)) == pem.count else { throw .libcrypto("BIO_read") }
        return String(decoding: pem, as: UTF8.self)
    }

    /// The public key's modulus `n` and exponent `e`, big-endian without leading zeros (a JWK's `n` and `e`).
    func publicComponents() throws(SigningFailure) -> (modulus: [UInt8], exponent: [UInt8]) {
        (try parameter(OSSL_PKEY_PARAM_RSA_N), try parameter(OSSL_PKEY_PARAM_RSA_E))
    }

    private func parameter(_ name: String) throws(SigningFailure) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { throw .libcrypto("EVP_PKEY_get_bn_param \(name)") }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        guard BN_bn2bin(number, &bytes) == bytes.count else { throw .libcrypto("BN_bn2bin") }
        return bytes
    }
}
