import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth
@testable import PortcullisHTTP

/// Identity Toolkit behaviours a Firebase client relies on.
@Suite("Identity Toolkit compatibility")
struct CompatibilityTests {
    @Test("an unknown tenantId is 400 TENANT_NOT_FOUND on end-user endpoints and 404 on admin paths")
    func unknownTenant() async throws {
        try await TestGateway.run { gateway in
            try await gateway.endUser("accounts:signUp", ["email": "y@example.com", "password": "secret1"], tenant: "no-such-tenant")
                .expectEnvelope(.badRequest, "TENANT_NOT_FOUND")
            try await gateway.endUser("accounts:signInWithPassword", ["email": "y@example.com", "password": "secret1"], tenant: "nope")
                .expectEnvelope(.badRequest, "TENANT_NOT_FOUND")
            let admin = try await gateway.send(.get, "\(gateway.tenants)/no-such-tenant")
            admin.expectEnvelope(.notFound, "TENANT_NOT_FOUND")
            #expect(try admin.json().value(at: ["error", "status"]) == .string("NOT_FOUND"))
            try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/no-such-tenant/accounts:lookup", json: #"{"localId":["x"]}"#
            )
            .expectEnvelope(.notFound, "TENANT_NOT_FOUND")
        }
    }

    @Test("emails are stored and returned in lower case; sign-in and uniqueness ignore case")
    func lowerCaseEmails() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"case","allowPasswordSignup":true}"#)
            let signUp = try await gateway.endUser(
                "accounts:signUp", ["email": "Ada.Lovelace@Example.COM", "password": "correct horse"], tenant: tenant)
            #expect(try signUp.json().value(at: ["email"]) == .string("ada.lovelace@example.com"))
            let session = try Session(signUp.json())
            #expect(session.claims.value(at: ["email"]) == .string("ada.lovelace@example.com"))
            let signedIn = try await gateway.signIn("ADA.LOVELACE@example.com", tenant: tenant)
            #expect(signedIn.claims.value(at: ["email"]) == .string("ada.lovelace@example.com"))
            let users = try await gateway.endUser("accounts:lookup", ["idToken": .string(signedIn.idToken)], tenant: tenant).json()
            guard case .array(let found)? = users.value(at: ["users"]), let user = found.first else { throw TestSetupError("no user") }
            #expect(user.value(at: ["email"]) == .string("ada.lovelace@example.com"))
            let updated = try await gateway.endUser(
                "accounts:update", ["idToken": .string(signedIn.idToken), "email": "Countess@Example.COM"], tenant: tenant)
            #expect(try updated.json().value(at: ["email"]) == .string("countess@example.com"))
            try await gateway.endUser("accounts:signUp", ["email": "COUNTESS@example.com", "password": "correct horse"], tenant: tenant)
                .expectEnvelope(.badRequest, "EMAIL_EXISTS")
        }
    }

    @Test("forward auth reads checkRevoked as Google's APIs read booleans, and refuses a value it cannot read")
    func checkRevokedSpellings() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"cr","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("cr@example.com", tenant: tenant)
            clock.advance(seconds: 1)
            try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:update",
                json: #"{"localId":"\#(session.uid)","validSince":"\#(clock.now().seconds)"}"#)
            func verify(_ query: String) async throws -> TestResponse {
                try await gateway.client.execute(
                    uri: "/v1/verify\(query)", method: .get, headers: [.authorization: "Bearer \(session.idToken)"])
            }
            for spelling in ["true", "True", "TRUE", "1"] {
                #expect(try await verify("?checkRevoked=\(spelling)").status == .unauthorized, "checkRevoked=\(spelling)")
            }
            for spelling in ["false", "False", "0"] {
                #expect(try await verify("?checkRevoked=\(spelling)").status == .ok, "checkRevoked=\(spelling)")
            }
            for spelling in ["yes please", "2", ""] {
                let response = try await verify("?checkRevoked=\(spelling)")
                response.expectEnvelope(.badRequest, "INVALID_ARGUMENT")
                #expect(response.headers.contains { $0.name.rawName.lowercased().hasPrefix("x-auth-") } == false)
            }
        }
    }
}
