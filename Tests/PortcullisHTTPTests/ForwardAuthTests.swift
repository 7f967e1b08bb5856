import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth
@testable import PortcullisCrypto
@testable import PortcullisHTTP

@Suite("Forward auth")
struct ForwardAuthTests {
    @Test("forward auth: 200 with X-Auth-* headers, 401 without any; tenant pin; checkRevoked")
    func forwardAuth() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"fa","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("fa@example.com", tenant: tenant)
            try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:update",
                json: #"{"localId":"\#(session.uid)","customAttributes":"{\"role\":\"admin\"}"}"#)
            let withClaims = try await gateway.signIn("fa@example.com", tenant: tenant)
            #expect(withClaims.claims.value(at: ["role"]) == .string("admin"))

            func verify(_ token: String?, tenantPin: String? = nil, query: String = "") async throws -> TestResponse {
                var headers: HTTPFields = [:]
                if let token { headers[.authorization] = "Bearer \(token)" }
                if let tenantPin { headers[VerifyRoutes.pinnedTenant] = tenantPin }
                return try await gateway.client.execute(uri: "/v1/verify\(query)", method: .get, headers: headers)
            }
            let ok = try await verify(withClaims.idToken)
            #expect(ok.status == .ok)
            #expect(ok.headers[VerifyRoutes.userId] == session.uid)
            #expect(ok.headers[VerifyRoutes.tenantId] == tenant)
            #expect(ok.headers[VerifyRoutes.email] == "fa@example.com")
            #expect(ok.headers[VerifyRoutes.emailVerified] == "false")
            let claims = try JSONValue.parse(Base64URL.decode(ok.headers[VerifyRoutes.claims] ?? "") ?? [])
            #expect(claims == .object(["role": "admin"]))
            #expect(try await verify(withClaims.idToken, tenantPin: tenant).status == .ok)

            for response in [
                try await verify(nil), try await verify("garbage"), try await verify(withClaims.idToken, tenantPin: "other"),
                try await verify(withClaims.idToken, tenantPin: ""),
            ] {
                #expect(response.status == .unauthorized)
                #expect(response.headers.contains { $0.name.rawName.lowercased().hasPrefix("x-auth-") } == false)
            }

            clock.advance(seconds: 1)
            try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:update",
                json: #"{"localId":"\#(session.uid)","validSince":"\#(clock.now().seconds)"}"#)
            #expect(try await verify(withClaims.idToken).status == .ok)
            #expect(try await verify(withClaims.idToken, query: "?checkRevoked=true").status == .unauthorized)
        }
    }

    @Test("a token verified once is remembered, but expiry and the tenant's deletion still apply to it")
    func verifiedTokenCache() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"vc","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("vc@example.com", tenant: tenant)
            func verify(_ token: String) async throws -> HTTPResponse.Status {
                try await gateway.client.execute(uri: "/v1/verify", method: .get, headers: [.authorization: "Bearer \(token)"]).status
            }
            let tokens = gateway.server.services.tokens
            // A verification remembers the token unless keys changed while it ran: the new
            // tenant's first key sends a notification that a loaded host may deliver late, and
            // the verification after it remembers.
            let remembered = try await eventually {
                try await verify(session.idToken) == .ok
                    && tokens.verified.claims(of: TokenFingerprint(session.idToken))?.subject == session.uid
            }
            #expect(remembered != nil)
            // The clock moves, not the test: the remembered token is judged at its expiry without waiting for it.
            guard case .integer(let exp)? = session.claims.value(at: ["exp"]) else { throw TestSetupError("no exp") }
            clock.set(Timestamp(seconds: exp - 1))
            #expect(try await tokens.verifyIDToken(session.idToken).subject == session.uid)
            clock.set(Timestamp(seconds: exp))
            await #expect(throws: AuthError(.tokenExpired)) { try await tokens.verifyIDToken(session.idToken) }
            #expect(try await verify(session.idToken) == .unauthorized)
            clock.set(SystemClock().now())

            let other = try await gateway.createTenant(#"{"displayName":"vd","allowPasswordSignup":true}"#)
            let live = try await gateway.signUp("vd@example.com", tenant: other)
            #expect(try await verify(live.idToken) == .ok)
            try await gateway.send(.delete, "/v2/projects/\(TestGateway.projectId)/tenants/\(other)")
            #expect(try await eventually { try await verify(live.idToken) == .unauthorized } != nil)
        }
    }

    @Test("the verified-token cache keeps two generations: recently used tokens survive, the oldest fall out")
    func verifiedTokenCacheBound() {
        let cache = VerifiedTokenCache(capacity: 2)
        func claims(_ subject: String) -> IDTokenClaims {
            IDTokenClaims(
                issuer: "i", audience: "a", subject: subject, issuedAt: 0, expiresAt: 1, authTime: 0, signInProvider: "password")
        }
        let generation = cache.generation
        cache.remember(TokenFingerprint("a"), claims("a"), ifGeneration: generation)
        cache.remember(TokenFingerprint("b"), claims("b"), ifGeneration: generation)
        cache.remember(TokenFingerprint("c"), claims("c"), ifGeneration: generation)  // a and b move to the previous generation
        #expect(cache.claims(of: TokenFingerprint("a"))?.subject == "a")  // used again: back in the current one
        cache.remember(TokenFingerprint("d"), claims("d"), ifGeneration: generation)  // c and a move back; b falls out
        #expect(cache.claims(of: TokenFingerprint("b")) == nil)
        #expect(["a", "c", "d"].allSatisfy { cache.claims(of: TokenFingerprint($0))?.subject == $0 })
        cache.invalidate(.signingKeys(.tenant("t")))
        #expect(cache.claims(of: TokenFingerprint("d")) == nil)
        // A verification that began before the keys changed is not remembered.
        cache.remember(TokenFingerprint("e"), claims("e"), ifGeneration: generation)
        #expect(cache.claims(of: TokenFingerprint("e")) == nil)
        cache.remember(TokenFingerprint("e"), claims("e"), ifGeneration: cache.generation)
        #expect(cache.claims(of: TokenFingerprint("e"))?.subject == "e")
    }
}
