import Foundation
import PortcullisTestSupport
import PortcullisVerifier
import Testing

/// How often the verifier asks the gateway for keys, counted by the gateway itself.
@Suite("JWKS caching")
struct JWKSCacheTests {
    @Test("50 concurrent verifications on a cold cache make one JWKS request, and later ones none")
    func singleFlight() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let user = try await gateway.signUp(tenant: tenant)
            let route = GatewayDaemon.jwksRoute(tenant: true)
            #expect(try await gateway.requestCount(route: route) == 0)
            let verifier = gateway.verifier(.tenant(tenant))
            let uids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await verifier.verify(user.idToken).uid } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(uids == Array(repeating: user.uid, count: 50))
            #expect(try await gateway.requestCount(route: route) == 1)
            // Cached for the gateway's max-age: no further request.
            for _ in 0..<10 { _ = try await verifier.verify(user.idToken) }
            #expect(try await gateway.requestCount(route: route) == 1)
            // Another verifier has its own cache.
            _ = try await gateway.verifier(.anyTenant).verify(user.idToken)
            #expect(try await gateway.requestCount(route: route) == 2)
        }
    }

    @Test("20 tokens with forged kids make at most one refetch")
    func forgedKids() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil)
            let route = GatewayDaemon.jwksRoute(tenant: false)
            let verifier = gateway.verifier(.projectUsers)
            _ = try await verifier.verify(user.idToken)
            #expect(try await gateway.requestCount(route: route) == 1)
            var header = try Forgery.header(of: user.idToken)
            let forged = try (0..<20).map { index in
                header["kid"] = .string("forged-\(index)")
                return try Forgery.replacingHeader(of: user.idToken, with: header)
            }
            let refusals = await withTaskGroup(of: TokenVerificationError?.self) { group in
                for token in forged { group.addTask { await refusal { try await verifier.verify(token) } } }
                return await group.reduce(into: [TokenVerificationError?]()) { $0.append($1) }
            }
            #expect(refusals == Array(repeating: .unknownKeyId, count: 20))
            let fetches = try await gateway.requestCount(route: route)
            #expect(fetches == 2, "\(fetches) JWKS requests: one cold fetch, one refetch")
            // And sequentially, within the refetch interval, none at all.
            for token in forged { _ = await refusal { try await verifier.verify(token) } }
            #expect(try await gateway.requestCount(route: route) == fetches)
        }
    }

    @Test("after a rotation the new kid is fetched once and both keys verify")
    func rotation() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"EdDSA"}"#)
            let route = GatewayDaemon.jwksRoute(tenant: true)
            let user = try await gateway.signUp(tenant: tenant)
            let verifier = gateway.verifier(.tenant(tenant))
            _ = try await verifier.verify(user.idToken)
            #expect(try await gateway.requestCount(route: route) == 1)

            let newKid = try await gateway.rotateKey(tenant: tenant)
            let newToken = try await gateway.signIn(tenant: tenant)
            #expect(try Forgery.header(of: newToken)["kid"] == .string(newKid))
            #expect(try Forgery.header(of: newToken)["kid"] != Forgery.header(of: user.idToken)["kid"])
            // Concurrent verifications of the new token share the one refetch.
            let uids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 { group.addTask { try await verifier.verify(newToken).uid } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(uids == Array(repeating: user.uid, count: 10))
            #expect(try await gateway.requestCount(route: route) == 2)
            // The retired key stays published: the old token still verifies, from the cache.
            #expect(try await verifier.verify(user.idToken).uid == user.uid)
            #expect(try await gateway.requestCount(route: route) == 2)
        }
    }

    @Test("an unknown kid right after another refetch waits for the refetch interval")
    func refetchInterval() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true}"#)
            let route = GatewayDaemon.jwksRoute(tenant: true)
            let user = try await gateway.signUp(tenant: tenant)
            // Shorter than the JWKS max-age, so only the unknown kid can cause the last fetch.
            let interval = Duration.seconds(60)
            let clock = SteppedClock()
            let verifier = gateway.verifier(.tenant(tenant), unknownKeyRefetchInterval: interval, clock: clock)
            var header = try Forgery.header(of: user.idToken)
            header["kid"] = .string("forged")
            let forged = try Forgery.replacingHeader(of: user.idToken, with: header)
            #expect(await refusal { try await verifier.verify(forged) } == .unknownKeyId)
            #expect(try await gateway.requestCount(route: route) == 2)  // the cold fetch and one refetch

            _ = try await gateway.rotateKey(tenant: tenant)
            let newToken = try await gateway.signIn(tenant: tenant)
            // Within the interval (seconds of it have passed) the new kid is refused without
            // asking the gateway…
            #expect(await refusal { try await verifier.verify(newToken) } == .unknownKeyId)
            #expect(try await gateway.requestCount(route: route) == 2)
            // …and after it, fetched.
            clock.step(interval)
            #expect(try await verifier.verify(newToken).uid == user.uid)
            #expect(try await gateway.requestCount(route: route) == 3)
        }
    }
}
