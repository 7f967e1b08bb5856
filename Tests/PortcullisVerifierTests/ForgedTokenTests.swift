import Foundation
import JWTKit
import PortcullisTestSupport
import PortcullisVerifier
import Testing

/// Forged, altered and misdirected tokens are refused, each for its own reason.
@Suite("Forged tokens")
struct ForgedTokenTests {
    @Test("tokens that are not compact JWS are malformed")
    func malformed() async throws {
        try await GatewayDaemon.run { gateway in
            let verifier = gateway.verifier(.projectUsers)
            let user = try await gateway.signUp(tenant: nil)
            let parts = Forgery.segments(user.idToken)
            for garbage in ["", "abc", "a.b", "\(parts[0]).\(parts[1])", "\(parts[0]).!!.\(parts[2])", "e30.e30.e30.e30"] {
                guard case .malformed? = await refusal({ try await verifier.verify(garbage) }) else {
                    Issue.record("not refused as malformed: \(garbage.prefix(20))")
                    continue
                }
            }
            let huge = user.idToken + String(repeating: "A", count: 20_000)
            #expect(await refusal { try await verifier.verify(huge) } == .malformed(reason: "too long"))
        }
    }

    @Test("alg none and HMAC are refused before any key is looked at")
    func unsupportedAlgorithms() async throws {
        try await GatewayDaemon.run { gateway in
            let verifier = gateway.verifier(.projectUsers)
            let user = try await gateway.signUp(tenant: nil)
            var header = try Forgery.header(of: user.idToken)
            header["alg"] = .string("none")
            let parts = Forgery.segments(try Forgery.replacingHeader(of: user.idToken, with: header))
            let unsigned = "\(parts[0]).\(parts[1])."
            #expect(await refusal { try await verifier.verify(unsigned) } == .unsupportedAlgorithm("none"))
            header["alg"] = .string("HS256")
            let hmac = try Forgery.replacingHeader(of: user.idToken, with: header)
            #expect(await refusal { try await verifier.verify(hmac) } == .unsupportedAlgorithm("HS256"))
            // Nothing was fetched for them.
            #expect(try await gateway.requestCount(route: GatewayDaemon.jwksRoute(tenant: false)) == 0)
        }
    }

    @Test("a kid that no published key has is refused")
    func unknownKid() async throws {
        try await GatewayDaemon.run { gateway in
            let verifier = gateway.verifier(.projectUsers)
            let user = try await gateway.signUp(tenant: nil)
            var header = try Forgery.header(of: user.idToken)
            header["kid"] = .string("no-such-key")
            #expect(
                await refusal { try await verifier.verify(try Forgery.replacingHeader(of: user.idToken, with: header)) } == .unknownKeyId)
            header["kid"] = nil
            #expect(
                await refusal { try await verifier.verify(try Forgery.replacingHeader(of: user.idToken, with: header)) } == .unknownKeyId)
            // The genuine token still verifies with the same verifier.
            #expect(try await verifier.verify(user.idToken).uid == user.uid)
        }
    }

    @Test("a token signed by another key under the gateway's kid has a bad signature")
    func anotherKey() async throws {
        try await GatewayDaemon.run { gateway in
            let verifier = gateway.verifier(.projectUsers)
            let user = try await gateway.signUp(tenant: nil)
            let kid = try #require(try Forgery.header(of: user.idToken)["kid"]?.stringValue)
            var claims = try Forgery.claims(of: user.idToken)
            claims["sub"] = .string("someone-else")
            claims["user_id"] = .string("someone-else")
            let forged = try await Forgery.signed(claims, kid: kid, by: try await Forgery.rs256Keys())
            #expect(try Forgery.header(of: forged)["alg"] == .string("RS256"))
            #expect(try Forgery.header(of: forged)["kid"] == .string(kid))
            #expect(await refusal { try await verifier.verify(forged) } == .badSignature)

            // Another project's token, signed by its own key but naming the gateway's kid.
            claims["aud"] = .string("other-project")
            claims["iss"] = .string("\(GatewayDaemon.publicURL)/other-project")
            let otherProject = try await Forgery.signed(claims, kid: kid, by: try await Forgery.rs256Keys())
            #expect(await refusal { try await verifier.verify(otherProject) } == .badSignature)

            // The genuine signature over altered claims.
            let altered = try Forgery.replacingClaims(of: user.idToken, with: claims)
            #expect(await refusal { try await verifier.verify(altered) } == .badSignature)
        }
    }

    @Test("alg must be the algorithm of the key the kid names")
    func algorithmMismatch() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let verifier = gateway.verifier(.tenant(tenant))
            let user = try await gateway.signUp(tenant: tenant)
            var header = try Forgery.header(of: user.idToken)
            header["alg"] = .string("RS256")
            let relabelled = try Forgery.replacingHeader(of: user.idToken, with: header)
            #expect(await refusal { try await verifier.verify(relabelled) } == .algorithmMismatch)
            // An ES256 signature by another key under the tenant's kid.
            let kid = try #require(header["kid"]?.stringValue)
            let forged = try await Forgery.signed(
                try Forgery.claims(of: user.idToken), kid: kid, by: await Forgery.es256Keys())
            #expect(await refusal { try await verifier.verify(forged) } == .badSignature)
        }
    }

    @Test("a verifier pinned to a tenant refuses other tenants' and project users' tokens")
    func pinnedTenant() async throws {
        try await GatewayDaemon.run { gateway in
            let tenantA = try await gateway.createTenant(#"{"displayName":"a","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let tenantB = try await gateway.createTenant(#"{"displayName":"b","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let userA = try await gateway.signUp(tenant: tenantA)
            let userB = try await gateway.signUp(tenant: tenantB)
            let projectUser = try await gateway.signUp(tenant: nil)
            let pinnedToA = gateway.verifier(.tenant(tenantA))
            #expect(try await pinnedToA.verify(userA.idToken).tenantId == tenantA)
            #expect(await refusal { try await pinnedToA.verify(userB.idToken) } == .wrongTenant)
            #expect(await refusal { try await pinnedToA.verify(projectUser.idToken) } == .wrongTenant)
            #expect(await refusal { try await gateway.verifier(.projectUsers).verify(userA.idToken) } == .wrongTenant)
            #expect(await refusal { try await gateway.verifier(.anyTenant).verify(projectUser.idToken) } == .wrongTenant)
            // Tenant B's keys were never fetched by the pinned verifier.
            #expect(try await gateway.requestCount(route: GatewayDaemon.jwksRoute(tenant: true)) == 1)
        }
    }

    @Test("in any-tenant mode, a token whose tenant claim was altered is refused")
    func alteredTenant() async throws {
        try await GatewayDaemon.run { gateway in
            let tenantA = try await gateway.createTenant(#"{"displayName":"a","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let tenantB = try await gateway.createTenant(#"{"displayName":"b","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let userA = try await gateway.signUp(tenant: tenantA)
            _ = try await gateway.signUp(tenant: tenantB)
            let verifier = gateway.verifier(.anyTenant)
            var claims = try Forgery.claims(of: userA.idToken)
            var firebase = try #require(claims["firebase"]?.objectValue)

            // Claiming tenant B: B's JWKS has no key with A's kid.
            firebase["tenant"] = .string(tenantB)
            claims["firebase"] = .object(firebase)
            let claimingB = try Forgery.replacingClaims(of: userA.idToken, with: claims)
            #expect(await refusal { try await verifier.verify(claimingB) } == .unknownKeyId)

            // Claiming B with B's issuer too, and B's kid: the signature is still A's.
            claims["iss"] = .string("\(GatewayDaemon.publicURL)/\(GatewayDaemon.projectId)/tenants/\(tenantB)")
            let tokenB = try await gateway.signIn(tenant: tenantB)
            let withKidB = try Forgery.replacingHeader(
                of: try Forgery.replacingClaims(of: userA.idToken, with: claims), with: try Forgery.header(of: tokenB))
            #expect(await refusal { try await verifier.verify(withKidB) } == .badSignature)

            // Claiming a tenant the gateway does not know.
            firebase["tenant"] = .string("no-such-tenant")
            claims["firebase"] = .object(firebase)
            let claimingNobody = try Forgery.replacingClaims(of: userA.idToken, with: claims)
            #expect(await refusal { try await verifier.verify(claimingNobody) } == .unknownTenant)

            // A tenant claim that is no tenant id never reaches a URL.
            firebase["tenant"] = .string("../../jwks")
            claims["firebase"] = .object(firebase)
            let traversal = try Forgery.replacingClaims(of: userA.idToken, with: claims)
            #expect(await refusal { try await verifier.verify(traversal) } == .invalidClaim(name: "firebase.tenant"))

            #expect(try await verifier.verify(userA.idToken).tenantId == tenantA)
        }
    }

    @Test("a verifier expecting another public URL refuses the issuer")
    func wrongIssuer() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil)
            let verifier = gateway.verifier(.projectUsers, publicURL: "https://elsewhere.example.com")
            #expect(await refusal { try await verifier.verify(user.idToken) } == .wrongIssuer)
        }
    }
}
