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

/// Sessions revoked by credential changes and disabling, and the recent sign-in rule.
extension TokenTests {
    @Test("a password change revokes other sessions (TOKEN_EXPIRED) and returns fresh tokens; disabled users get USER_DISABLED")
    func revocation() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"v","allowPasswordSignup":true}"#)
            let old = try await gateway.signUp("v@example.com", tenant: tenant)
            // "Before" is strictly earlier in whole seconds (for the ID token; its session dies either way).
            clock.advance(seconds: 1)
            let changed = try await gateway.endUser(
                "accounts:update", ["idToken": .string(old.idToken), "password": "a new secret"], tenant: tenant)
            #expect(changed.status == .ok, "\(String(buffer: changed.body))")
            let fresh = try Session(changed.json())
            try await gateway.refresh(old.refreshToken).expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            try await gateway.endUser("accounts:lookup", ["idToken": .string(old.idToken)], tenant: tenant)
                .expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(fresh.idToken)], tenant: tenant).status == .ok)
            #expect(try await gateway.refresh(fresh.refreshToken).status == .ok)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "v@example.com", "password": "correct horse"], tenant: tenant
            )
            .expectEnvelope(.badRequest, "INVALID_PASSWORD")
            _ = try await gateway.signIn("v@example.com", "a new secret", tenant: tenant)

            // Admin disable: sign-in is USER_DISABLED, the session's refresh dies.
            let live = try await gateway.signIn("v@example.com", "a new secret", tenant: tenant)
            let disabled = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:update",
                json: #"{"localId":"\#(fresh.uid)","disableUser":true}"#)
            #expect(disabled.status == .ok)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "v@example.com", "password": "a new secret"], tenant: tenant
            )
            .expectEnvelope(.badRequest, "USER_DISABLED")
            let refreshed = try await gateway.refresh(live.refreshToken)
            #expect(["USER_DISABLED", "TOKEN_EXPIRED"].contains(refreshed.errorMessage ?? ""), "\(refreshed.errorMessage ?? "ok")")
        }
    }

    @Test("delete, email and password changes need a recent sign-in; signing in again gives a fresh auth_time")
    func recentLogin() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"w","allowPasswordSignup":true,"recentLoginWindowSeconds":1}"#)
            let session = try await gateway.signUp("w@example.com", tenant: tenant)
            clock.advance(seconds: 2)
            for body: [String: JSONValue] in [["password": "another secret"], ["email": "w2@example.com"]] {
                var request = body
                request["idToken"] = .string(session.idToken)
                try await gateway.endUser("accounts:update", request, tenant: tenant).expectEnvelope(
                    .badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            }
            try await gateway.endUser("accounts:delete", ["idToken": .string(session.idToken)], tenant: tenant)
                .expectEnvelope(.badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            // Profile changes are not sensitive.
            let renamed = try await gateway.endUser(
                "accounts:update", ["idToken": .string(session.idToken), "displayName": "W"], tenant: tenant)
            #expect(try renamed.json().value(at: ["displayName"]) == .string("W"))
            #expect(try renamed.json().value(at: ["idToken"]) == nil)

            let again = try await gateway.signIn("w@example.com", tenant: tenant)
            #expect(again.claims.value(at: ["auth_time"]) != session.claims.value(at: ["auth_time"]))
            #expect(try await gateway.endUser("accounts:delete", ["idToken": .string(again.idToken)], tenant: tenant).status == .ok)
            try await gateway.endUser("accounts:lookup", ["idToken": .string(again.idToken)], tenant: tenant).expectEnvelope(
                .badRequest, "USER_NOT_FOUND")
        }
    }
}
