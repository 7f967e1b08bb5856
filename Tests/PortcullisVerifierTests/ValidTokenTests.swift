import Foundation
import PortcullisTestSupport
import PortcullisVerifier
import Testing

/// Genuine tokens of the real gateway verify, for project users and tenants, with each
/// signing algorithm, and say who the user is.
@Suite("Valid tokens")
struct ValidTokenTests {
    @Test("a project user's RS256 token verifies")
    func projectUser() async throws {
        try await GatewayDaemon.run { gateway in
            let user = try await gateway.signUp(tenant: nil, email: "Project@Example.com")
            #expect(try Forgery.header(of: user.idToken)["alg"] == .string("RS256"))
            let before = Date()
            let identity = try await gateway.verifier(.projectUsers).verify(user.idToken)
            #expect(identity.uid == user.uid)
            #expect(identity.tenantId == nil)
            #expect(identity.email == "project@example.com")
            #expect(identity.emailVerified == false)
            #expect(identity.signInProvider == "password")
            #expect(identity.issuer == "\(GatewayDaemon.publicURL)/\(GatewayDaemon.projectId)")
            #expect(identity.identities["email"] == .array([.string("project@example.com")]))
            #expect(identity.authTime <= identity.issuedAt)
            #expect(identity.expiresAt.timeIntervalSince(identity.issuedAt) == 3600)
            #expect(abs(identity.issuedAt.timeIntervalSince(before)) < 30)
            #expect(identity.customClaims.isEmpty)
            // The project-users-and-tenants mode takes it too.
            #expect(try await gateway.verifier(.projectUsersAndAnyTenant).verify(user.idToken).uid == user.uid)
        }
    }

    @Test("a tenant user's token verifies, for each signing algorithm", arguments: ["RS256", "ES256", "EdDSA"])
    func tenantUser(algorithm: String) async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(
                #"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"\#(algorithm)"}"#)
            let user = try await gateway.signUp(tenant: tenant)
            #expect(try Forgery.header(of: user.idToken)["alg"] == .string(algorithm))
            for accepted in [AcceptedTenants.tenant(tenant), .anyTenant, .projectUsersAndAnyTenant] {
                let identity = try await gateway.verifier(accepted).verify(user.idToken)
                #expect(identity.uid == user.uid)
                #expect(identity.tenantId == tenant)
                #expect(identity.email == "a@example.com")
                #expect(identity.issuer == "\(GatewayDaemon.publicURL)/\(GatewayDaemon.projectId)/tenants/\(tenant)")
            }
        }
    }

    @Test("custom claims come out as JSON values, registered claims stay out")
    func customClaims() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            let user = try await gateway.signUp(tenant: tenant)
            let attributes = #"{\"role\":\"admin\",\"level\":3,\"teams\":[\"a\",\"b\"],\"flags\":{\"beta\":true}}"#
            try await gateway.adminUpdate(
                tenant: tenant, #"{"localId":"\#(user.uid)","customAttributes":"\#(attributes)","emailVerified":true}"#)
            let token = try await gateway.signIn(tenant: tenant)
            let identity = try await gateway.verifier(.tenant(tenant)).verify(token)
            #expect(
                identity.customClaims == [
                    "role": .string("admin"), "level": .number(3), "teams": .array([.string("a"), .string("b")]),
                    "flags": .object(["beta": .bool(true)]),
                ])
            #expect(identity.emailVerified)
        }
    }

    @Test("a token is still accepted within the expiry leeway, and refused after it")
    func expiry() async throws {
        try await GatewayDaemon.run { gateway in
            let tenant = try await gateway.createTenant(
                #"{"displayName":"v","allowPasswordSignup":true,"signingAlgorithm":"EdDSA","idTokenLifetimeSeconds":1}"#)
            let user = try await gateway.signUp(tenant: tenant)
            let strict = gateway.verifier(.tenant(tenant), expirationLeeway: .zero)
            let lenient = gateway.verifier(.tenant(tenant), expirationLeeway: .seconds(30))
            // (The token may already be past `exp` here: `iat` is whole seconds.)
            #expect(try await lenient.verify(user.idToken).uid == user.uid)
            try await Task.sleep(for: .milliseconds(2100))
            #expect(await refusal { try await strict.verify(user.idToken) } == .expired)
            #expect(try await lenient.verify(user.idToken).uid == user.uid)
        }
    }
}
