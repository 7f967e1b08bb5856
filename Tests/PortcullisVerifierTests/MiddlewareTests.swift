import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisTestSupport
import PortcullisVerifier
import PortcullisVerifierHummingbird
import Testing

/// `VerifiedIdentityMiddleware` in a Hummingbird application, verifying against the real gateway.
@Suite("Hummingbird middleware")
struct MiddlewareTests {
    /// An application whose `/me` answers the verified uid (and tenant).
    static func application(
        _ verifier: IDTokenVerifier, checkRevoked: Bool = false, requiresIdentity: Bool = true
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicVerifiedIdentityRequestContext.self)
        router.add(
            middleware: VerifiedIdentityMiddleware(verifier: verifier, checkRevoked: checkRevoked, requiresIdentity: requiresIdentity))
        router.get("me") { _, context in
            guard let identity = context.identity else { return "anonymous" }
            return "\(identity.uid) \(identity.tenantId ?? "-")"
        }
        router.get("strict") { _, context in try context.requireIdentity().uid }
        return Application(router: router)
    }

    static func json(_ buffer: ByteBuffer) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(String(buffer: buffer).utf8))) ?? [:]
    }

    @Test("401 without a token or with a forged one, 200 with the identity for a genuine one")
    func requiredIdentity() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let user = try await gateway.signUp(tenant: tenant)
            var header = try Forgery.header(of: user.idToken)
            header["alg"] = .string("none")
            let forged = try Forgery.replacingHeader(of: user.idToken, with: header)
            let app = Self.application(gateway.verifier(.tenant(tenant)))
            try await app.test(.router) { client in
                try await client.execute(uri: "/me", method: .get) { response in
                    #expect(response.status == .unauthorized)
                    #expect(response.headers[.wwwAuthenticate] == "Bearer")
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    #expect(Self.json(response.body)["error"] == "missing_token")
                }
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(forged)"]) { response in
                    #expect(response.status == .unauthorized)
                    let challenge = response.headers[.wwwAuthenticate] ?? ""
                    #expect(challenge.hasPrefix(#"Bearer error="invalid_token""#))
                    #expect(Self.json(response.body)["error"] == "invalid_token")
                    #expect(!String(buffer: response.body).contains(Forgery.segments(user.idToken)[1]))
                }
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Basic dXNlcjpwYXNz"]) { response in
                    #expect(response.status == .unauthorized)
                    #expect(Self.json(response.body)["error"] == "invalid_request")
                }
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(user.idToken)"]) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body) == "\(user.uid) \(tenant)")
                }
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "bearer  \(user.idToken)"]) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }

    @Test("optional identity: no token passes anonymously, a bad token is still refused")
    func optionalIdentity() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil)
            let app = Self.application(gateway.verifier(.projectUsers), requiresIdentity: false)
            try await app.test(.router) { client in
                try await client.execute(uri: "/me", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body) == "anonymous")
                }
                try await client.execute(uri: "/strict", method: .get) { response in
                    #expect(response.status == .unauthorized)
                }
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer not.a.token"]) { response in
                    #expect(response.status == .unauthorized)
                }
                try await client.execute(uri: "/strict", method: .get, headers: [.authorization: "Bearer \(user.idToken)"]) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body) == user.uid)
                }
            }
        }
    }

    @Test("checkRevoked: a disabled user's token is refused")
    func revoked() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil)
            let app = Self.application(gateway.verifier(.projectUsers), checkRevoked: true)
            try await app.test(.router) { client in
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(user.idToken)"]) { response in
                    #expect(response.status == .ok)
                }
                try await gateway.adminUpdate(tenant: nil, #"{"localId":"\#(user.uid)","disableUser":true}"#)
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(user.idToken)"]) { response in
                    #expect(response.status == .unauthorized)
                    #expect(Self.json(response.body)["error_description"]?.hasPrefix("the session is no longer valid") == true)
                }
            }
        }
    }

    @Test("503 when the gateway cannot be reached")
    func unreachableGateway() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil)
            let verifier = IDTokenVerifier(
                configuration: VerifierConfiguration(
                    gatewayURL: "http://127.0.0.1:1", publicURL: GatewayDaemon.publicURL, projectId: GatewayDaemon.projectId,
                    acceptedTenants: .projectUsers, requestTimeout: .seconds(2)))
            try await Self.application(verifier).test(.router) { client in
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(user.idToken)"]) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.headers[.wwwAuthenticate] == nil)
                    #expect(Self.json(response.body)["error"] == "temporarily_unavailable")
                }
            }
        }
    }
}
