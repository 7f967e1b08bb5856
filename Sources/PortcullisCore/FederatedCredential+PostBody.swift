extension FederatedCredential {
    /// Reads `signInWithIdp`'s `postBody`: a URL-encoded form with `providerId` and
    /// `id_token` or `access_token` (and an optional `nonce`).
    ///
    /// `INVALID_IDP_RESPONSE` when it names no provider or carries neither token;
    /// `INVALID_ARGUMENT` when it is not a form.
    public init(postBody: String) throws(AuthError) {
        var fields: [String: String] = [:]
        // Split on bytes, as form encoding is defined: a String split walks grapheme
        // clusters, which over a kilobyte of token was most of this function's cost.
        let body = Array(postBody.utf8)
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.formDecode(parts[0]), let value = Self.formDecode(parts.count > 1 ? parts[1] : []) else {
                throw AuthError(.invalidArgument, detail: "postBody is not a URL-encoded form")
            }
            if fields[name] == nil { fields[name] = value }
        }
        guard let providerId = fields["providerId"], !providerId.isEmpty else {
            throw AuthError(.invalidIdpResponse, detail: "postBody has no providerId")
        }
        let idToken = fields["id_token"].flatMap { $0.isEmpty ? nil : $0 }
        let accessToken = fields["access_token"].flatMap { $0.isEmpty ? nil : $0 }
        guard idToken != nil || accessToken != nil else {
            throw AuthError(.invalidIdpResponse, detail: "postBody has neither id_token nor access_token")
        }
        self.init(
            providerId: providerId, idToken: idToken, accessToken: accessToken,
            nonce: fields["nonce"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; `nil`
    /// for a broken escape or bytes that are not UTF-8.
    private static func formDecode(_ text: ArraySlice<UInt8>) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
