import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@Suite("Email actions")
struct EmailActionTests {
    @Test("verification: the link arrives by a signed webhook, never in the answer; applying it verifies once")
    func verifyEmail() async throws {
        try await EmailActionFixture.run { fixture in
            let session = try await fixture.gateway.signUp("ada@example.com", tenant: fixture.tenant)
            let sent = try await fixture.send([
                "requestType": "VERIFY_EMAIL", "idToken": .string(session.idToken), "returnOobLink": true,
                "continueUrl": "https://app.example.com/done",
            ])
            #expect(sent.status == .ok, "\(String(buffer: sent.body))")
            #expect(try sent.json().value(at: ["email"]) == "ada@example.com")
            // returnOobLink is for admins only: nothing of the code comes back to an end user.
            #expect(try sent.json().value(at: ["oobLink"]) == nil)
            #expect(!String(buffer: sent.body).contains("oobCode"))

            let delivery = try #require(try await fixture.receiver.waitForDeliveries(1).first)
            // The HMAC a receiver checks: over "<t>.<body>" with the tenant's derived secret.
            let header = try #require(delivery.signature)
            let timestamp = try #require(header.split(separator: ",").first?.dropFirst(2)).description
            let secretPath = "/v2/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/webhookSecret"
            let tenantKey = try await fixture.gateway.key(.tenant(fixture.tenant))
            let answer = try await fixture.gateway.send(.get, secretPath, key: tenantKey)
            guard case .string(let secret)? = try answer.json().value(at: ["secret"]) else {
                throw TestSetupError("no secret: \(String(buffer: answer.body))")
            }
            #expect(secret == WebhookSigningKeys(masterKey: TestGateway.masterKey).secret(tenantId: fixture.tenant, version: 1))
            let otherKey = try await fixture.gateway.key(.tenant(try await fixture.gateway.createTenant()))
            try await fixture.gateway.send(.get, secretPath, key: otherKey).expectEnvelope(.forbidden, "PERMISSION_DENIED")
            let expected = HMAC<SHA256>.authenticationCode(
                for: Array("\(timestamp).".utf8) + delivery.body, using: SymmetricKey(data: Data(secret.utf8)))
            #expect(header == "t=\(timestamp),v1=" + expected.map { String(format: "%02x", $0) }.joined())
            #expect(delivery.json.value(at: ["type"]) == "VERIFY_EMAIL")
            #expect(delivery.json.value(at: ["email"]) == "ada@example.com")
            #expect(delivery.json.value(at: ["tenantId"]) == .string(fixture.tenant))
            let link = try #require(delivery.link)
            #expect(link.hasPrefix("http://localhost/__/auth/action?mode=verifyEmail&oobCode="))
            #expect(link.contains("apiKey=\(TestGateway.apiKey)"))
            #expect(link.contains("tenantId=\(fixture.tenant)"))
            #expect(link.contains("continueUrl=https%3A%2F%2Fapp.example.com%2Fdone"))
            let code = try #require(delivery.oobCode)

            #expect(try await fixture.lookup(session.idToken)?.value(at: ["emailVerified"]) == false)
            let applied = try await fixture.gateway.endUser("accounts:update", ["oobCode": .string(code)], tenant: fixture.tenant)
            #expect(applied.status == .ok, "\(String(buffer: applied.body))")
            #expect(try applied.json().value(at: ["emailVerified"]) == true)
            #expect(try await fixture.lookup(session.idToken)?.value(at: ["emailVerified"]) == true)
            // Single use; and a verification revokes nothing (the session still works).
            try await fixture.gateway.endUser("accounts:update", ["oobCode": .string(code)], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            #expect(try await fixture.gateway.refresh(session.refreshToken).status == .ok)
            // A code of another tenant's namespace is unknown here.
            try await fixture.gateway.endUser("accounts:update", ["oobCode": .string(code)])
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            try await fixture.gateway.endUser("accounts:update", ["oobCode": ""], tenant: fixture.tenant)
                .expectEnvelope(.badRequest, "MISSING_OOB_CODE")
        }
    }

    @Test("reset: the code reports its purpose, sets the password, verifies the email, revokes every session, once")
    func passwordReset() async throws {
        let clock = ManualClock()
        try await EmailActionFixture.run(configure: { $0.clock = clock }) { fixture in
            let tenant = fixture.tenant
            let session = try await fixture.gateway.signUp("bob@example.com", "old password", tenant: tenant)
            // ID tokens are judged in whole seconds (DESIGN.md §1): one from the reset's own
            // second would survive it, so the reset happens a second after the sign-in.
            clock.advance(seconds: 1)
            let sent = try await fixture.send(["requestType": "PASSWORD_RESET", "email": "Bob@Example.com"])
            #expect(sent.status == .ok, "\(String(buffer: sent.body))")
            let code = try #require(try await fixture.receiver.waitForDeliveries(1).first?.oobCode)

            let checked = try await fixture.gateway.endUser("accounts:resetPassword", ["oobCode": .string(code)], tenant: tenant)
            #expect(try checked.json().value(at: ["email"]) == "bob@example.com")
            #expect(try checked.json().value(at: ["requestType"]) == "PASSWORD_RESET")
            // A weak password spends nothing.
            try await fixture.gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(code), "newPassword": "short"], tenant: tenant
            ).expectEnvelope(.badRequest, "WEAK_PASSWORD")
            let reset = try await fixture.gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(code), "newPassword": "new password"], tenant: tenant)
            #expect(reset.status == .ok, "\(String(buffer: reset.body))")

            try await fixture.gateway.refresh(session.refreshToken).expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            try await fixture.gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: tenant)
                .expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            let fresh = try await fixture.gateway.signIn("bob@example.com", "new password", tenant: tenant)
            #expect(try await fixture.lookup(fresh.idToken)?.value(at: ["emailVerified"]) == true)
            try await fixture.gateway.endUser(
                "accounts:signInWithPassword", ["email": "bob@example.com", "password": "old password"], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_PASSWORD")
            try await fixture.gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(code), "newPassword": "third password"], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_OOB_CODE")
            try await fixture.gateway.endUser("accounts:resetPassword", ["newPassword": "x"], tenant: tenant)
                .expectEnvelope(.badRequest, "MISSING_OOB_CODE")
            // A reset code does not apply as a verification.
            let another = try await fixture.adminCode("PASSWORD_RESET", email: "bob@example.com")
            try await fixture.gateway.endUser("accounts:update", ["oobCode": .string(another)], tenant: tenant)
                .expectEnvelope(.badRequest, "INVALID_OOB_CODE")
        }
    }

    @Test("two resets racing with one code: exactly one sets its password")
    func resetRace() async throws {
        try await EmailActionFixture.run { fixture in
            _ = try await fixture.gateway.signUp("race@example.com", tenant: fixture.tenant)
            let code = try await fixture.adminCode("PASSWORD_RESET", email: "race@example.com")
            let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for password in ["first password", "second password"] {
                    group.addTask {
                        let answer = try await fixture.gateway.endUser(
                            "accounts:resetPassword", ["oobCode": .string(code), "newPassword": .string(password)],
                            tenant: fixture.tenant)
                        return (password, Int(answer.status.code))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            #expect(statuses.values.sorted() == [200, 400], "\(statuses)")
            let winner = try #require(statuses.first { $0.value == 200 }?.key)
            _ = try await fixture.gateway.signIn("race@example.com", winner, tenant: fixture.tenant)
        }
    }

    @Test("codes expire after the tenant's oobCodeLifetimeSeconds")
    func expiry() async throws {
        let clock = ManualClock()
        try await EmailActionFixture.run(tenantSettings: #","oobCodeLifetimeSeconds":60"#, configure: { $0.clock = clock }) { fixture in
            _ = try await fixture.gateway.signUp("old@example.com", tenant: fixture.tenant)
            let code = try await fixture.adminCode("PASSWORD_RESET", email: "old@example.com")
            clock.advance(seconds: 59)
            #expect(
                try await fixture.gateway.endUser("accounts:resetPassword", ["oobCode": .string(code)], tenant: fixture.tenant).status
                    == .ok)
            clock.advance(seconds: 1)
            try await fixture.gateway.endUser(
                "accounts:resetPassword", ["oobCode": .string(code), "newPassword": "new password"], tenant: fixture.tenant
            ).expectEnvelope(.badRequest, "EXPIRED_OOB_CODE")
        }
    }

    @Test("an email change happens only when the link sent to the new address is used")
    func changeEmail() async throws {
        try await EmailActionFixture.run { fixture in
            let tenant = fixture.tenant
            let session = try await fixture.gateway.signUp("carol@example.com", tenant: tenant)
            _ = try await fixture.gateway.signUp("taken@example.com", tenant: tenant)
            try await fixture.send([
                "requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": .string(session.idToken), "newEmail": "taken@example.com",
            ]).expectEnvelope(.badRequest, "EMAIL_EXISTS")
            try await fixture.send(["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": .string(session.idToken)])
                .expectEnvelope(.badRequest, "MISSING_NEW_EMAIL")
            let sent = try await fixture.send([
                "requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": .string(session.idToken), "newEmail": "carol@new.example",
            ])
            #expect(sent.status == .ok, "\(String(buffer: sent.body))")
            let delivery = try #require(try await fixture.receiver.waitForDeliveries(1).first)
            #expect(delivery.json.value(at: ["newEmail"]) == "carol@new.example")
            #expect(delivery.json.value(at: ["email"]) == "carol@example.com")
            // Nothing changed yet.
            #expect(try await fixture.lookup(session.idToken)?.value(at: ["email"]) == "carol@example.com")
            let code = try #require(delivery.oobCode)
            let checked = try await fixture.gateway.endUser("accounts:resetPassword", ["oobCode": .string(code)], tenant: tenant)
            #expect(try checked.json().value(at: ["email"]) == "carol@example.com")
            #expect(try checked.json().value(at: ["newEmail"]) == "carol@new.example")
            #expect(try checked.json().value(at: ["requestType"]) == "VERIFY_AND_CHANGE_EMAIL")

            let applied = try await fixture.gateway.endUser("accounts:update", ["oobCode": .string(code)], tenant: tenant)
            #expect(try applied.json().value(at: ["email"]) == "carol@new.example")
            // An email change ends the sessions started before it; the new address signs in, verified.
            try await fixture.gateway.refresh(session.refreshToken).expectEnvelope(.badRequest, "TOKEN_EXPIRED")
            let fresh = try await fixture.gateway.signIn("carol@new.example", tenant: tenant)
            #expect(try await fixture.lookup(fresh.idToken)?.value(at: ["emailVerified"]) == true)
        }
    }

    @Test("a stolen ID token past the recent-login window cannot move the account's email to the thief's address")
    func changeEmailNeedsRecentLogin() async throws {
        let clock = ManualClock()
        try await EmailActionFixture.run(configure: { $0.clock = clock }) { fixture in
            let session = try await fixture.gateway.signUp("victim@example.com", tenant: fixture.tenant)
            clock.advance(seconds: 301)
            try await fixture.send([
                "requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": .string(session.idToken), "newEmail": "thief@example.net",
            ]).expectEnvelope(.badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            // Verification needs no recent sign-in: it proves the current address, which the thief cannot read.
            #expect(try await fixture.send(["requestType": "VERIFY_EMAIL", "idToken": .string(session.idToken)]).status == .ok)
            let delivery = try #require(try await fixture.receiver.waitForDeliveries(1).first)
            #expect(delivery.json.value(at: ["email"]) == "victim@example.com")
        }
    }

    @Test("a reset for an unknown email: EMAIL_NOT_FOUND, or under email privacy the answer a real account gets and no mail")
    func enumerationSafe() async throws {
        try await EmailActionFixture.run(tenantSettings: #","emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}"#) { fixture in
            _ = try await fixture.gateway.signUp("real@example.com", tenant: fixture.tenant)
            let unknown = try await fixture.send(["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
            let known = try await fixture.send(["requestType": "PASSWORD_RESET", "email": "real@example.com"])
            #expect(unknown.status == .ok)
            #expect(known.status == .ok)
            #expect(try unknown.json().value(at: ["kind"]) == known.json().value(at: ["kind"]))
            #expect(try Set(unknown.json().objectValue?.keys ?? [:].keys) == Set(known.json().objectValue?.keys ?? [:].keys))
            let deliveries = try await fixture.receiver.waitForDeliveries(1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(fixture.receiver.accepted.count == 1)
            #expect(deliveries.first?.json.value(at: ["email"]) == "real@example.com")
        }
        try await EmailActionFixture.run { fixture in
            try await fixture.send(["requestType": "PASSWORD_RESET", "email": "nobody@example.com"])
                .expectEnvelope(.badRequest, "EMAIL_NOT_FOUND")
            try await fixture.send(["requestType": "PASSWORD_RESET"]).expectEnvelope(.badRequest, "MISSING_EMAIL")
            try await fixture.send(["email": "a@example.com"]).expectEnvelope(.badRequest, "MISSING_REQ_TYPE")
            try await fixture.send(["requestType": "EMAIL_SIGNIN", "email": "a@example.com"])
                .expectEnvelope(.badRequest, "INVALID_REQ_TYPE")
        }
    }

    @Test("continueUrl must be on an authorised domain; a flood of resets is refused")
    func continueURLAndFlood() async throws {
        try await EmailActionFixture.run { fixture in
            _ = try await fixture.gateway.signUp("dave@example.com", tenant: fixture.tenant)
            try await fixture.send([
                "requestType": "PASSWORD_RESET", "email": "dave@example.com", "continueUrl": "https://evil.example/phish",
            ]).expectEnvelope(.badRequest, "UNAUTHORIZED_DOMAIN")
            try await fixture.send(["requestType": "PASSWORD_RESET", "email": "dave@example.com", "continueUrl": "javascript:alert(1)"])
                .expectEnvelope(.badRequest, "INVALID_CONTINUE_URI")
            for _ in 0..<EmailActionPolicy.codesPerUserPerHour {
                _ = try await fixture.adminCode("PASSWORD_RESET", email: "dave@example.com")
            }
            try await fixture.send(["requestType": "PASSWORD_RESET", "email": "dave@example.com"])
                .expectEnvelope(.badRequest, "RESET_PASSWORD_EXCEED_LIMIT")
        }
    }

    @Test("admin links: returned, not sent; a tenant key cannot make links for another tenant's users")
    func adminLinks() async throws {
        try await EmailActionFixture.run { fixture in
            _ = try await fixture.gateway.signUp("erin@example.com", tenant: fixture.tenant)
            let code = try await fixture.adminCode("VERIFY_EMAIL", email: "erin@example.com")
            #expect(code.count >= 43)
            try await Task.sleep(for: .milliseconds(300))
            #expect(fixture.receiver.accepted.isEmpty)
            let other = try await fixture.gateway.createTenant()
            let otherKey = try await fixture.gateway.key(.tenant(other))
            let refused = try await fixture.gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/accounts:sendOobCode",
                json: #"{"requestType":"PASSWORD_RESET","email":"erin@example.com","returnOobLink":true}"#, key: otherKey)
            refused.expectEnvelope(.forbidden, "PERMISSION_DENIED")
            let unknown = try await fixture.gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/accounts:sendOobCode",
                json: #"{"requestType":"PASSWORD_RESET","email":"nobody@example.com","returnOobLink":true}"#)
            unknown.expectEnvelope(.badRequest, "EMAIL_NOT_FOUND")
        }
    }

    @Test("webhook delivery: two failures, then delivered exactly once; given up on after max attempts")
    func retries() async throws {
        try await EmailActionFixture.run(configure: { $0.emailDelivery.maxAttempts = 3 }) { fixture in
            _ = try await fixture.gateway.signUp("flaky@example.com", tenant: fixture.tenant)
            fixture.receiver.fail(next: 2)
            #expect(try await fixture.send(["requestType": "PASSWORD_RESET", "email": "flaky@example.com"]).status == .ok)
            let deliveries = try await fixture.receiver.waitForDeliveries(1)
            try await Task.sleep(for: .milliseconds(500))
            #expect(fixture.receiver.accepted.count == 1)
            #expect(fixture.receiver.refused == 2)
            #expect(deliveries.first?.messageId?.isEmpty == false)
            let outbox = EmailOutboxRepository(database: fixture.gateway.server.database, logger: TestDatabase.logger)
            // The receiver counts the delivery before the gateway records it.
            #expect(try await eventually { try await outbox.messages(tenant: TenantScope(fixture.tenant)).first?.delivered == true } != nil)
            #expect(try await outbox.messages(tenant: TenantScope(fixture.tenant)).first?.attempts == 3)

            fixture.receiver.fail(next: 100)
            #expect(try await fixture.send(["requestType": "PASSWORD_RESET", "email": "flaky@example.com"]).status == .ok)
            let gaveUp = try await eventually(within: .seconds(10)) {
                try await outbox.messages(tenant: TenantScope(fixture.tenant)).last?.dead == true
            }
            #expect(gaveUp != nil)
            let message = try #require(try await outbox.messages(tenant: TenantScope(fixture.tenant)).last)
            #expect(message.attempts == 3 && !message.delivered)
            #expect(message.lastError?.contains("503") == true, "\(message.lastError ?? "")")
            let audit = try await fixture.gateway.send(.get, "/v2/projects/\(TestGateway.projectId)/tenants/\(fixture.tenant)/auditEvents")
            #expect(String(buffer: audit.body).contains("email.dead_letter"))
        }
    }
}
