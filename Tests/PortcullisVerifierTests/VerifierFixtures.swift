import CryptoExtras
import Foundation
import JWTKit
import PortcullisTestSupport
import PortcullisVerifier
import Synchronization
import Testing

/// A user the gateway signed up, with the tokens it returned.
struct SignedUpUser {
    let uid: String
    let idToken: String
    let email: String
}

/// The JSON body of an admin answer, for the error messages of `#require`.
struct GatewayFailure: Error, CustomStringConvertible {
    let description: String
}

extension GatewayDaemon {
    /// The path prefix of a tenant's (or the project users') admin and end-user resources.
    static func resourcePath(tenant: String?) -> String {
        tenant.map { "/v1/projects/\(projectId)/tenants/\($0)" } ?? "/v1/projects/\(projectId)"
    }

    /// The route template of a JWKS in the daemon's metrics.
    static func jwksRoute(tenant: Bool) -> String {
        tenant ? "/v1/projects/{project}/tenants/{tenant}/jwks" : "/v1/projects/{project}/jwks"
    }

    /// Signs up a password user of `tenant` (`nil`: a project user, after allowing password
    /// sign-up for the project's own users, which a new project does not).
    func signUp(tenant: String?, email: String = "a@example.com") async throws -> SignedUpUser {
        if tenant == nil {
            let answer = try await send(
                "PATCH", "/v2/projects/\(Self.projectId)/config?updateMask=allowPasswordSignup", json: #"{"allowPasswordSignup":true}"#)
            guard answer.status == 200 else { throw GatewayFailure(description: "config: \(answer.status) \(answer.text)") }
        }
        let tenantField = tenant.map { #","tenantId":"\#($0)""# } ?? ""
        let answer = try await endUser(
            "accounts:signUp", json: #"{"email":"\#(email)","password":"secret-pass","returnSecureToken":true\#(tenantField)}"#)
        guard answer.status == 200, let uid = answer.json["localId"] as? String, let idToken = answer.json["idToken"] as? String else {
            throw GatewayFailure(description: "signUp: \(answer.status) \(answer.text)")
        }
        return SignedUpUser(uid: uid, idToken: idToken, email: email)
    }

    /// Signs a password user in again; returns the new ID token.
    func signIn(tenant: String?, email: String = "a@example.com") async throws -> String {
        let tenantField = tenant.map { #","tenantId":"\#($0)""# } ?? ""
        let answer = try await endUser(
            "accounts:signInWithPassword", json: #"{"email":"\#(email)","password":"secret-pass","returnSecureToken":true\#(tenantField)}"#)
        guard answer.status == 200, let idToken = answer.json["idToken"] as? String else {
            throw GatewayFailure(description: "signIn: \(answer.status) \(answer.text)")
        }
        return idToken
    }

    /// An admin `accounts:update` of a user of `tenant`.
    func adminUpdate(tenant: String?, _ json: String) async throws {
        let answer = try await send("POST", Self.resourcePath(tenant: tenant) + "/accounts:update", json: json)
        guard answer.status == 200 else { throw GatewayFailure(description: "accounts:update: \(answer.status) \(answer.text)") }
    }

    /// Rotates `tenant`'s signing key on demand; returns the new `kid`.
    func rotateKey(tenant: String) async throws -> String {
        let answer = try await send("POST", "/v2/projects/\(Self.projectId)/tenants/\(tenant)/keys:rotate")
        guard answer.status == 200, let kid = answer.json["kid"] as? String else {
            throw GatewayFailure(description: "keys:rotate: \(answer.status) \(answer.text)")
        }
        return kid
    }

    /// A verifier of this daemon's tokens.
    func verifier(
        _ accepted: AcceptedTenants, publicURL: String = GatewayDaemon.publicURL, expirationLeeway: Duration = .seconds(5),
        unknownKeyRefetchInterval: Duration = .seconds(10), clock: SteppedClock = SteppedClock()
    ) -> IDTokenVerifier {
        IDTokenVerifier(
            configuration: VerifierConfiguration(
                gatewayURL: baseURL, publicURL: publicURL, projectId: Self.projectId, acceptedTenants: accepted,
                expirationLeeway: expirationLeeway, unknownKeyRefetchInterval: unknownKeyRefetchInterval),
            now: { clock.now })
    }
}

/// The monotonic clock, plus however far a test has stepped it: the JWKS cache's refetch
/// interval and max-age pass when the test says, however slow the machine is.
final class SteppedClock: Sendable {
    private let offset = Mutex(Duration.zero)

    /// `ContinuousClock.now`, moved by every step so far.
    var now: ContinuousClock.Instant { .now + offset.withLock { $0 } }

    /// Moves the clock forward by `duration`.
    func step(_ duration: Duration) { offset.withLock { $0 += duration } }
}

/// Runs `verify` and returns the error it throws, or `nil` when it accepted the token (an
/// error of another type is recorded as an issue).
func refusal(_ verify: () async throws -> VerifiedIdentity) async -> TokenVerificationError? {
    do {
        _ = try await verify()
        return nil
    } catch let error as TokenVerificationError {
        return error
    } catch {
        Issue.record("not a TokenVerificationError: \(error)")
        return nil
    }
}

/// Tampering with compact JWS tokens: the forger's tools.
enum Forgery {
    /// The three segments of `token`.
    static func segments(_ token: String) -> [Substring] {
        token.split(separator: ".", omittingEmptySubsequences: false)
    }

    /// The decoded header of `token`.
    static func header(of token: String) throws -> [String: JSONValue] {
        try decodeObject(segments(token)[0])
    }

    /// The decoded claims of `token`.
    static func claims(of token: String) throws -> [String: JSONValue] {
        try decodeObject(segments(token)[1])
    }

    /// `token` with its header replaced (payload and signature kept).
    static func replacingHeader(of token: String, with header: [String: JSONValue]) throws -> String {
        let parts = segments(token)
        return [try encode(header), String(parts[1]), String(parts[2])].joined(separator: ".")
    }

    /// `token` with its claims replaced (header and signature kept).
    static func replacingClaims(of token: String, with claims: [String: JSONValue]) throws -> String {
        let parts = segments(token)
        return [String(parts[0]), try encode(claims), String(parts[2])].joined(separator: ".")
    }

    /// A token with `claims`, signed by the default key of `keys` (which picks the algorithm)
    /// and naming `kid` in its header.
    static func signed(_ claims: [String: JSONValue], kid: String, by keys: JWTKeyCollection) async throws -> String {
        // No key of the collection has `kid`: jwt-kit signs with its default key.
        try await keys.sign(RawClaims(claims: claims), header: ["kid": .string(kid)])
    }

    /// A collection whose default key is a fresh ES256 key.
    static func es256Keys() async -> JWTKeyCollection {
        await JWTKeyCollection().add(ecdsa: ES256PrivateKey())
    }

    /// A collection whose default key is a fresh RSA-2048 key, signing RS256.
    static func rs256Keys() async throws -> JWTKeyCollection {
        let key = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        return await JWTKeyCollection().add(rsa: key, digestAlgorithm: .sha256)
    }

    /// base64url of JSON `object`, unpadded.
    static func encode(_ object: [String: JSONValue]) throws -> String {
        base64URL(try JSONEncoder().encode(JSONValue.object(object)))
    }

    /// Unpadded base64url of `data`.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func decodeObject(_ segment: Substring) throws -> [String: JSONValue] {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try #require(try JSONDecoder().decode(JSONValue.self, from: data).objectValue)
    }
}

/// Claims to sign as they are.
struct RawClaims: JWTPayload {
    let claims: [String: JSONValue]

    init(claims: [String: JSONValue]) {
        self.claims = claims
    }

    init(from decoder: any Decoder) throws {
        claims = try decoder.singleValueContainer().decode([String: JSONValue].self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(claims)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
