import Foundation
import PortcullisTestSupport
import PortcullisVerifier
import Testing

/// `checkRevoked: true` asks the gateway about sessions the token alone cannot tell about.
@Suite("Revocation checks")
struct RevocationTests {
    @Test("after an admin revocation the token verifies locally, not with checkRevoked")
    func revokedSession() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let user = try await gateway.signUp(tenant: tenant)
            let verifier = gateway.verifier(.tenant(tenant))
            #expect(try await verifier.verify(user.idToken, checkRevoked: true).uid == user.uid)
            #expect(try await gateway.requestCount(route: "/v1/verify") == 1)

            // Revocation is strictly after auth_time in whole seconds.
            let authTime = try #require(try Forgery.claims(of: user.idToken)["auth_time"]?.numberValue)
            while Date().timeIntervalSince1970 < authTime + 1 { try await Task.sleep(for: .milliseconds(100)) }
            try await gateway.adminUpdate(
                tenant: tenant, #"{"localId":"\#(user.uid)","validSince":"\#(Int(Date().timeIntervalSince1970))"}"#)

            #expect(try await verifier.verify(user.idToken).uid == user.uid)
            #expect(await refusal { try await verifier.verify(user.idToken, checkRevoked: true) } == .revoked(detail: "TOKEN_EXPIRED"))
            #expect(try await gateway.requestCount(route: "/v1/verify", status: 401) == 1)
            // A new sign-in is live again.
            let fresh = try await gateway.signIn(tenant: tenant)
            #expect(try await verifier.verify(fresh, checkRevoked: true).uid == user.uid)
        }
    }

    @Test("a disabled user's token is refused with checkRevoked")
    func disabledUser() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil)
            let verifier = gateway.verifier(.projectUsers)
            #expect(try await verifier.verify(user.idToken, checkRevoked: true).uid == user.uid)
            try await gateway.adminUpdate(tenant: nil, #"{"localId":"\#(user.uid)","disableUser":true}"#)
            #expect(try await verifier.verify(user.idToken).uid == user.uid)
            let error = await refusal { try await verifier.verify(user.idToken, checkRevoked: true) }
            guard case .revoked(let detail)? = error else {
                Issue.record("not revoked: \(String(describing: error))")
                return
            }
            #expect(["USER_DISABLED", "TOKEN_EXPIRED"].contains(detail))
        }
    }

    @Test("a deleted user's token is refused with checkRevoked")
    func deletedUser() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true}"#)
            let user = try await gateway.signUp(tenant: tenant)
            let verifier = gateway.verifier(.anyTenant)
            let deleted = try await gateway.send(
                "POST", GatewayDaemon.resourcePath(tenant: tenant) + "/accounts:delete", json: #"{"localId":"\#(user.uid)"}"#)
            #expect(deleted.status == 200)
            #expect(try await verifier.verify(user.idToken).uid == user.uid)
            guard case .revoked? = await refusal({ try await verifier.verify(user.idToken, checkRevoked: true) }) else {
                Issue.record("a deleted user's token passed the revocation check")
                return
            }
        }
    }

    @Test("an unreachable gateway is unavailable, not a refusal")
    func unreachableGateway() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil)
            let configuration = VerifierConfiguration(
                gatewayURL: "http://127.0.0.1:1", publicURL: GatewayDaemon.publicURL, projectId: GatewayDaemon.projectId,
                acceptedTenants: .projectUsers, requestTimeout: .seconds(2))
            let error = await refusal { try await IDTokenVerifier(configuration: configuration).verify(user.idToken) }
            guard case .jwksUnavailable? = error else {
                Issue.record("expected jwksUnavailable, got \(String(describing: error))")
                return
            }
            #expect(error?.isUnavailable == true)
        }
    }
}
