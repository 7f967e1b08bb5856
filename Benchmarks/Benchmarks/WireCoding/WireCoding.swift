// Does the project's own JSON layer (parser + lenient decoder, encoder + serializer) earn its
// place against Foundation's JSONDecoder/JSONEncoder on the bodies of the hot routes, and
// what the Base64URL facade (canonical check, padding) adds to swift-extras-base64, and what
// Hummingbird's general form decoder costs on `/v1/token`'s form body? Figures: BENCHMARKS.md.
import Benchmark
import ExtrasBase64
import Foundation
import Hummingbird
import PortcullisJSON

/// `accounts:signInWithPassword` as the Firebase JS SDK sends it.
struct SignInBody: Codable {
    let email: String?
    let password: String?
    let returnSecureToken: Bool?
    let clientType: String?
    let tenantId: String?
}

/// securetoken's refresh, JSON form.
struct RefreshBody: Codable {
    let grant_type: String?
    let refresh_token: String?
}

/// `accounts:lookup` and the other ID-token bodies.
struct LookupBody: Codable {
    let idToken: String?
}

/// An ID token's claims, as forward auth reads them on every request.
struct ClaimsBody: Codable {
    struct Firebase: Codable {
        let sign_in_provider: String
        let tenant: String?
        let identities: [String: [String]]?
    }

    let iss: String
    let aud: String
    let sub: String
    let iat: Int64
    let exp: Int64
    let auth_time: Int64
    let email: String?
    let email_verified: Bool?
    let name: String?
    let picture: String?
    let firebase: Firebase
    let role: String?
    let teams: [String]?
}

struct SignInAnswer: Codable {
    var kind = "identitytoolkit#VerifyPasswordResponse"
    let localId: String
    let email: String
    let displayName: String
    var registered = true
    let idToken: String
    let refreshToken: String
    let expiresIn: String
}

struct RefreshAnswer: Codable {
    let access_token: String
    let id_token: String
    let refresh_token: String
    let expires_in: String
    var token_type = "Bearer"
    let user_id: String
    let project_id: String
}

struct ProviderAnswer: Codable {
    let providerId: String
    let federatedId: String
    let rawId: String
    let email: String?
    let displayName: String?
    let photoUrl: String?
}

struct UserAnswer: Codable {
    let localId: String
    let email: String?
    let emailVerified: Bool
    let displayName: String?
    let photoUrl: String?
    let disabled: Bool
    let tenantId: String?
    let validSince: String
    let createdAt: String
    let lastLoginAt: String?
    let lastRefreshAt: String?
    let providerUserInfo: [ProviderAnswer]
}

struct LookupAnswer: Codable {
    var kind = "identitytoolkit#GetAccountInfoResponse"
    let users: [UserAnswer]
}

enum Fixture {
    /// An RS256 ID token's size: header, ~600 bytes of claims, a 256-byte signature.
    static let idToken =
        Base64URL.encode(Array(#"{"alg":"RS256","kid":"k3yIdK3yIdK3yIdK3yId","typ":"JWT"}"#.utf8)) + "."
        + Base64URL.encode(claims) + "." + Base64URL.encode(signature)
    static let claims = Array(
        (#"{"aud":"demo-project","auth_time":1763900000,"email":"user@example.com","email_verified":true,"#
            + #""exp":1763903600,"firebase":{"identities":{"email":["user@example.com"]},"#
            + #""sign_in_provider":"password","tenant":"acme-7x2k"},"iat":1763900000,"#
            + #""iss":"https://auth.example.com/demo-project/tenants/acme-7x2k","#
            + #""name":"A user with a fairly ordinary display name","#
            + #""picture":"https://cdn.example.com/avatars/0123456789abcdef0123456789abcdef.png","#
            + #""sub":"Vq3d7XbJt2aQ0rK9mZ1pL8sW4uY6","user_id":"Vq3d7XbJt2aQ0rK9mZ1pL8sW4uY6","#
            + #""role":"editor","teams":["red","blue"]}"#).utf8)
    static let signature = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    static let refreshToken = "pr1.Vq3d7XbJt2aQ0rK9mZ1pL8sW.q8Zr3kT0vB6nM2xC9wL4yH7uJ1aS5dF0gE3"

    static let signIn = Array(
        #"{"returnSecureToken":true,"email":"user@example.com","password":"correct horse battery staple","clientType":"CLIENT_TYPE_WEB","tenantId":"acme-7x2k"}"#
            .utf8)
    static let refresh = Array(#"{"grant_type":"refresh_token","refresh_token":"\#(refreshToken)"}"#.utf8)
    static let lookup = Array(#"{"idToken":"\#(idToken)"}"#.utf8)
    /// `/v1/token` as the Firebase SDKs send it: form-encoded, a token of today's shape.
    static let refreshForm = Array(
        "grant_type=refresh_token&refresh_token=pr2.YWNtZS03eDJr.Vq3d7XbJt2aQ0rK9mZ1pLw.q8Zr3kT0vB6nM2xC9wL4yH7uJ1aS5dF0gE3hI2jK4lM"
            .utf8)

    static let signInAnswer = SignInAnswer(
        localId: "Vq3d7XbJt2aQ0rK9mZ1pL8sW4uY6", email: "user@example.com", displayName: "A user",
        idToken: idToken, refreshToken: refreshToken, expiresIn: "3600")
    static let refreshAnswer = RefreshAnswer(
        access_token: idToken, id_token: idToken, refresh_token: refreshToken, expires_in: "3600",
        user_id: "Vq3d7XbJt2aQ0rK9mZ1pL8sW4uY6", project_id: "demo-project")
    static let lookupAnswer = LookupAnswer(users: [
        UserAnswer(
            localId: "Vq3d7XbJt2aQ0rK9mZ1pL8sW4uY6", email: "user@example.com", emailVerified: true,
            displayName: "A user with a fairly ordinary display name",
            photoUrl: "https://cdn.example.com/avatars/0123456789abcdef0123456789abcdef.png", disabled: false,
            tenantId: "acme-7x2k", validSince: "1763900000", createdAt: "1763800000000", lastLoginAt: "1763900000000",
            lastRefreshAt: "2026-11-23T12:13:20.000Z",
            providerUserInfo: [
                ProviderAnswer(
                    providerId: "password", federatedId: "user@example.com", rawId: "user@example.com",
                    email: "user@example.com", displayName: "A user with a fairly ordinary display name",
                    photoUrl: "https://cdn.example.com/avatars/0123456789abcdef0123456789abcdef.png")
            ])
    ])
}

func decodeBoth<T: Decodable>(_ name: String, _ type: T.Type, _ body: [UInt8]) {
    Benchmark("decode \(name) · Portcullis (parser + lenient decoder)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSONValueDecoder().decode(type, from: JSONValue.parse(body)))
        }
    }
    Benchmark("decode \(name) · Foundation JSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSONDecoder().decode(type, from: Data(body)))
        }
    }
}

func encodeBoth<T: Encodable>(_ name: String, _ value: T) {
    Benchmark("encode \(name) · Portcullis (encoder + serializer)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSONValueEncoder().encode(value).serializedBytes())
        }
    }
    Benchmark("encode \(name) · Foundation JSONEncoder") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSONEncoder().encode(value))
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 10_000)

    decodeBoth("sign-in", SignInBody.self, Fixture.signIn)
    decodeBoth("refresh", RefreshBody.self, Fixture.refresh)
    decodeBoth("lookup", LookupBody.self, Fixture.lookup)
    decodeBoth("ID-token claims", ClaimsBody.self, Fixture.claims)
    let form = Fixture.refreshForm
    Benchmark("decode refresh, form · Portcullis (URLEncodedForm + lenient decoder)") { benchmark in
        for _ in benchmark.scaledIterations {
            guard let fields = URLEncodedForm.fields(form) else { fatalError("the fixture is a form") }
            blackHole(try JSONValueDecoder().decode(RefreshBody.self, from: .object(fields.mapValues(JSONValue.string))))
        }
    }
    Benchmark("decode refresh, form · Hummingbird URLEncodedFormDecoder") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try URLEncodedFormDecoder().decode(RefreshBody.self, from: String(decoding: form, as: UTF8.self)))
        }
    }
    encodeBoth("sign-in answer", Fixture.signInAnswer)
    encodeBoth("refresh answer", Fixture.refreshAnswer)
    encodeBoth("lookup answer", Fixture.lookupAnswer)

    let urlOptions: Base64.EncodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
    let claims = Fixture.claims
    let encodedClaims = Array(Base64URL.encode(claims).utf8)
    Benchmark("base64url encode 550 B · Base64URL") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(Base64URL.encode(claims)) }
    }
    Benchmark("base64url encode 550 B · swift-extras-base64") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(Base64.encodeToString(bytes: claims, options: urlOptions)) }
    }
    Benchmark("base64url decode 550 B · Base64URL") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(Base64URL.decode(utf8: encodedClaims[...])) }
    }
    Benchmark("base64url decode 550 B · swift-extras-base64") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try Base64.decode(bytes: encodedClaims[...], options: [.base64UrlAlphabet, .omitPaddingCharacter]))
        }
    }
}
