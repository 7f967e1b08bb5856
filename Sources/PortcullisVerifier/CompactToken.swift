import Foundation

/// A compact JWS split and decoded, not verified: the header's `alg` and `kid`, the payload's
/// claims, and what the signature covers.
struct CompactToken: Sendable {
    /// The longest token accepted; an ID token is about 1 KiB, custom claims add at most 1000 bytes.
    static let maximumLength = 16 * 1024

    /// The header's `alg`.
    let algorithm: String
    /// The header's `kid`.
    let keyId: String
    /// The payload's members.
    let claims: [String: JSONValue]
    /// `<header>.<payload>`, as it was signed.
    let signingInput: [UInt8]
    /// The decoded signature.
    let signature: [UInt8]

    /// Splits and decodes `token`; `malformed` unless it is three base64url segments whose first
    /// two are JSON objects, with a string `alg` and no `crit` header.
    init(_ token: String) throws(TokenVerificationError) {
        guard token.utf8.count <= Self.maximumLength else { throw .malformed(reason: "too long") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed(reason: "not three segments") }
        guard let headerBytes = Self.base64URLDecoded(parts[0]),
            case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerBytes)
        else { throw .malformed(reason: "header is not a JSON object") }
        guard let payloadBytes = Self.base64URLDecoded(parts[1]),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payloadBytes)
        else { throw .malformed(reason: "payload is not a JSON object") }
        guard let signature = Self.base64URLDecoded(parts[2]) else { throw .malformed(reason: "signature is not base64url") }
        guard case .string(let algorithm)? = header["alg"] else { throw .malformed(reason: "no alg") }
        // No extension is understood, so none that must be understood is accepted (RFC 7515 §4.1.11).
        guard header["crit"] == nil else { throw .malformed(reason: "crit header") }
        guard IDTokenVerifier.supportedAlgorithms.contains(algorithm) else {
            throw .unsupportedAlgorithm(TokenVerificationError.sanitised(algorithm, limit: 16))
        }
        guard case .string(let keyId)? = header["kid"], !keyId.isEmpty else { throw .unknownKeyId }
        self.algorithm = algorithm
        self.keyId = keyId
        self.claims = claims
        self.signingInput = Array(token[parts[0].startIndex..<parts[1].endIndex].utf8)
        self.signature = Array(signature)
    }

    /// The tenant the payload claims (`firebase.tenant`), unverified; `nil` for a project user.
    /// `malformed` when `firebase` is not an object or the tenant not a valid tenant id.
    func claimedTenant() throws(TokenVerificationError) -> String? {
        guard case .object(let firebase)? = claims["firebase"] else { throw .invalidClaim(name: "firebase") }
        switch firebase["tenant"] {
        case nil, .null?: return nil
        case .string(let tenant)? where Self.isTenantId(tenant): return tenant
        default: throw .invalidClaim(name: "firebase.tenant")
        }
    }

    /// Whether `id` can name a tenant: 1–128 ASCII letters, digits and hyphens (also what keeps
    /// it safe in a JWKS path).
    static func isTenantId(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
            }
    }

    /// Decodes unpadded base64url; `nil` for anything else.
    static func base64URLDecoded(_ segment: Substring) -> Data? {
        guard
            segment.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
                    || byte == 0x5F
            })
        else { return nil }
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
