public import Foundation

/// An ID token with the claims an app reads, decoded without verification: the app
/// trusts the gateway it got the token from. A backend verifies instead
/// (`PortcullisVerifier`).
public struct IDTokenResult: Sendable {
    /// The token (a JWT).
    public let token: String
    /// `exp`.
    public let expirationDate: Date
    /// `iat`.
    public let issuedAtDate: Date
    /// `auth_time`: when the user last signed in (sensitive actions need it recent).
    public let authDate: Date
    /// `firebase.sign_in_provider`: `password`, `anonymous`, `custom`, `google.com`, …
    public let signInProvider: String?
    /// `firebase.tenant`.
    public let tenantId: String?
    /// The payload as JSON (custom claims included), for claims this type does not name.
    public let claimsJSON: Data

    private struct Claims: Decodable {
        struct Firebase: Decodable {
            var signInProvider: String?
            var tenant: String?

            enum CodingKeys: String, CodingKey {
                case signInProvider = "sign_in_provider", tenant
            }
        }

        var exp: Double
        var iat: Double
        var authTime: Double
        var firebase: Firebase?

        enum CodingKeys: String, CodingKey {
            case exp, iat, authTime = "auth_time", firebase
        }
    }

    /// Decodes `token`'s payload.
    init(token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        var payload = parts.count == 3 ? String(parts[1]) : ""
        payload = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        guard let data = Data(base64Encoded: payload), let claims = try? JSONDecoder().decode(Claims.self, from: data) else {
            throw AuthClientError(.internalError, detail: "the ID token is not a JWT this SDK can read")
        }
        self.token = token
        expirationDate = Date(timeIntervalSince1970: claims.exp)
        issuedAtDate = Date(timeIntervalSince1970: claims.iat)
        authDate = Date(timeIntervalSince1970: claims.authTime)
        signInProvider = claims.firebase?.signInProvider
        tenantId = claims.firebase?.tenant
        claimsJSON = data
    }
}
