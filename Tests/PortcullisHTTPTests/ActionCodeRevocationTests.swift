import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// Every revocation kills the action codes issued before it (DESIGN.md §1): an old reset
/// link must not outlive the password change or the reset that followed it.
@Suite("Action codes and revocation")
struct ActionCodeRevocationTests {
    @Test("a password change kills every outstanding code; a code issued after it works")
    func passwordChange() async throws {
        try await EmailActionFixture.run { fixture in
            let gateway = fixture.gateway
            let session = try await gateway.signUp("ann@example.com", "old password", tenant: fixture.tenant)
            let reset = try await fixture.adminCode("PASSWORD_RESET", email: "ann@example.com")
            let verify = try await fixture.adminCode("VERIFY_EMAIL", email: "ann@example.com")
            let changed = try await gateway.endUser(
                "accounts:update",
                ["idToken": .string(session.idToken), "password": "new password", "returnSecureToken": true],
                tenant: fixture.tenant)
            #expect(changed.status == .ok, "\(String(buffer: changed.body))")
            try await gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(reset), "newPassword": "attacker's"], tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            try await gateway.endUser("accounts:update", ["oobCode": .string(verify)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            _ = try await gateway.signIn("ann@example.com", "new password", tenant: fixture.tenant)
            let fresh = try await fixture.adminCode("PASSWORD_RESET", email: "ann@example.com")
            let applied = try await gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(fresh), "newPassword": "third password"], tenant: fixture.tenant)
            #expect(applied.status == .ok, "\(String(buffer: applied.body))")
        }
    }

    @Test("a reset kills the other reset codes issued before it, and an email change kills codes for the old address")
    func resetAndEmailChange() async throws {
        try await EmailActionFixture.run { fixture in
            let gateway = fixture.gateway
            _ = try await gateway.signUp("bea@example.com", "old password", tenant: fixture.tenant)
            let first = try await fixture.adminCode("PASSWORD_RESET", email: "bea@example.com")
            let second = try await fixture.adminCode("PASSWORD_RESET", email: "bea@example.com")
            let used = try await gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(first), "newPassword": "owner's choice"], tenant: fixture.tenant)
            #expect(used.status == .ok, "\(String(buffer: used.body))")
            try await gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(second), "newPassword": "attacker's"], tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            _ = try await gateway.signIn("bea@example.com", "owner's choice", tenant: fixture.tenant)

            let verifyOld = try await fixture.adminCode("VERIFY_EMAIL", email: "bea@example.com")
            let change = try await fixture.adminCode(
                "VERIFY_AND_CHANGE_EMAIL", email: "bea@example.com", extra: ["newEmail": "bea@new.example"])
            let secondChange = try await fixture.adminCode(
                "VERIFY_AND_CHANGE_EMAIL", email: "bea@example.com", extra: ["newEmail": "bea@other.example"])
            let moved = try await gateway.endUser("accounts:update", ["oobCode": .string(change)], tenant: fixture.tenant)
            #expect(moved.status == .ok, "\(String(buffer: moved.body))")
            // Issued for an address the account no longer has, and before the change's revocation.
            try await gateway.endUser("accounts:update", ["oobCode": .string(verifyOld)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            try await gateway.endUser("accounts:update", ["oobCode": .string(secondChange)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
        }
    }

    @Test("an admin's revocation and a disable kill outstanding codes too")
    func adminRevocation() async throws {
        try await EmailActionFixture.run { fixture in
            let gateway = fixture.gateway
            let session = try await gateway.signUp("cy@example.com", tenant: fixture.tenant)
            let reset = try await fixture.adminCode("PASSWORD_RESET", email: "cy@example.com")
            let admin = "/v1/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/accounts:update"
            // An explicit watermark a second ahead of the code, as revokeRefreshTokens sends it.
            let watermark = SystemClock().now().seconds + 1
            let revoked = try await gateway.send(
                .post, admin, json: #"{"localId":"\#(session.uid)","validSince":"\#(watermark)"}"#)
            #expect(revoked.status == .ok, "\(String(buffer: revoked.body))")
            try await gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(reset), "newPassword": "attacker's"], tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "INVALID_OOB_CODE")

            let disabledCode = try await fixture.adminCode("PASSWORD_RESET", email: "cy@example.com")
            #expect(try await gateway.send(.post, admin, json: #"{"localId":"\#(session.uid)","disableUser":true}"#).status == .ok)
            #expect(try await gateway.send(.post, admin, json: #"{"localId":"\#(session.uid)","disableUser":false}"#).status == .ok)
            try await gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(disabledCode), "newPassword": "attacker's"], tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "INVALID_OOB_CODE")
        }
    }

    @Test("a password change in the re-authentication's second returns tokens unlike any issued before; those die")
    func sameSecondPasswordChange() async throws {
        let clock = ManualClock(Timestamp(microseconds: SystemClock().now().seconds * 1_000_000 + 100_000))
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("dee@example.com", "old password", tenant: tenant)
            clock.advance(seconds: 1)
            let reauthenticated = try await gateway.signIn("dee@example.com", "old password", tenant: tenant)
            clock.set(Timestamp(microseconds: clock.now().microseconds + 300_000))
            // The JS SDK sends no tenantId here: the token's tenant is the request's.
            let changed = try await gateway.endUser(
                "accounts:update",
                ["idToken": .string(reauthenticated.idToken), "password": "new password", "returnSecureToken": true],
                tenant: tenant)
            #expect(changed.status == .ok, "\(String(buffer: changed.body))")
            let fresh = try Session(changed.json())
            #expect(fresh.idToken != reauthenticated.idToken)
            #expect(fresh.claims.value(at: ["auth_time"]) != reauthenticated.claims.value(at: ["auth_time"]))
            try await gateway.endUser("accounts:lookup", ["idToken": .string(reauthenticated.idToken)], tenant: tenant)
                .expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            #expect(try await gateway.refresh(reauthenticated.refreshToken).errorMessage == "TOKEN_EXPIRED")
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(fresh.idToken)], tenant: tenant).status == .ok)
            #expect(try await gateway.refresh(fresh.refreshToken).status == .ok)
            // A sign-in right after the change starts after the change's second: its tokens live.
            let after = try await gateway.signIn("dee@example.com", "new password", tenant: tenant)
            #expect(try await gateway.refresh(after.refreshToken).status == .ok)
        }
    }
}
