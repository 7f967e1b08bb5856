import CLibCrypto

extension SigningFailure {
    /// A `library` failure for the libcrypto call `operation`, with the reasons OpenSSL
    /// queued on this thread; reading them empties the queue for the next call.
    static func libcrypto(_ operation: String) -> SigningFailure {
        var reasons = [operation]
        var code = ERR_get_error()
        while code != 0 {
            reasons.append(ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)")
            code = ERR_get_error()
        }
        return .library(reasons.joined(separator: ": "))
    }
}
