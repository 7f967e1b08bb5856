import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("Email delivery")
struct EmailDeliveryTests {
    static func configure(_ receiver: WebhookReceiver?) -> @Sendable (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.outboundAllowedNetworks = [IPNetwork("127.0.0.0/8")].compactMap { $0 }
            configuration.emailDelivery.retryBaseDelay = .milliseconds(50)
            configuration.emailDelivery.retryMaxDelay = .milliseconds(200)
            configuration.emailDelivery.pollInterval = .milliseconds(100)
            // Retries come every 50–200 ms here: a loaded machine must not dead-letter a message
            // the test expects the next daemon to deliver.
            configuration.emailDelivery.maxAttempts = 100
        }
    }

    static func webhookTenant(_ gateway: TestGateway, _ receiver: WebhookReceiver) async throws -> String {
        try await gateway.createTenant(
            #"{"allowPasswordSignup":true,"emailDelivery":{"channel":"WEBHOOK","webhookUri":"\#(receiver.url)"}}"#)
    }

    @Test("two instances on one database deliver every message exactly once")
    func twoInstances() async throws {
        try await WebhookReceiver.run { receiver in
            let settings = try await TestDatabase.create()
            let a = try TestGateway.make(settings: settings, configure: Self.configure(receiver))
            let b = try TestGateway.make(settings: settings, configure: Self.configure(receiver))
            try await a.application.test(.router) { clientA in
                try await b.application.test(.router) { clientB in
                    let key = try await a.services.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                    let gatewayA = TestGateway(server: a, client: clientA, projectKey: key)
                    let gatewayB = TestGateway(server: b, client: clientB, projectKey: key)
                    let tenant = try await Self.webhookTenant(gatewayA, receiver)
                    let count = 24
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for index in 0..<count {
                            group.addTask {
                                let gateway = index.isMultiple(of: 2) ? gatewayA : gatewayB
                                let email = "user\(index)@example.com"
                                _ = try await gateway.signUp(email, tenant: tenant)
                                let sent = try await gateway.endUser(
                                    "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": .string(email)],
                                    tenant: tenant)
                                #expect(sent.status == .ok)
                            }
                        }
                        try await group.waitForAll()
                    }
                    _ = try await receiver.waitForDeliveries(count)
                    // Time for any duplicate to show up.
                    try await Task.sleep(for: .milliseconds(500))
                    let deliveries = receiver.accepted
                    #expect(deliveries.count == count)
                    #expect(Set(deliveries.compactMap(\.messageId)).count == count)
                    #expect(Set(deliveries.compactMap { $0.json.value(at: ["email"]) }).count == count)
                }
            }
        }
    }

    @Test("messages pending when a daemon stops are delivered by the next one")
    func pendingSurviveRestart() async throws {
        try await WebhookReceiver.run { receiver in
            let settings = try await TestDatabase.create()
            let first = try TestGateway.make(settings: settings, configure: Self.configure(receiver))
            let tenant = try await first.application.test(.router) { client in
                let key = try await first.services.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                let gateway = TestGateway(server: first, client: client, projectKey: key)
                let tenant = try await Self.webhookTenant(gateway, receiver)
                // The receiver is down for the first daemon's whole life.
                receiver.fail(next: 1_000_000)
                for index in 0..<3 {
                    _ = try await gateway.signUp("late\(index)@example.com", tenant: tenant)
                    #expect(
                        try await gateway.endUser(
                            "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": .string("late\(index)@example.com")],
                            tenant: tenant
                        ).status == .ok)
                }
                #expect(try await eventually { receiver.refused >= 3 } != nil)
                return tenant
            }
            receiver.fail(next: 0)
            #expect(receiver.accepted.isEmpty)
            let second = try TestGateway.make(settings: settings, configure: Self.configure(receiver))
            let outbox = EmailOutboxRepository(database: second.database, logger: TestDatabase.logger)
            try await second.application.test(.router) { _ in
                let deliveries = try await receiver.waitForDeliveries(3)
                #expect(Set(deliveries.compactMap(\.messageId)).count == 3)
                #expect(try await eventually { try await outbox.messages(tenant: TenantScope(tenant)).allSatisfy(\.delivered) } != nil)
            }
        }
    }

    /// Makes the tenant's message due and claims it, as a daemon's attempt does.
    static func claimNow(
        _ outbox: EmailOutboxRepository, _ database: Database, tenant: String, lease: Duration
    ) async throws -> ClaimedMessage {
        let due: PostgresQuery = "UPDATE email_outbox SET next_attempt_at = now() WHERE tenant_id = \(tenant)"
        for try await _ in try await database.pool().client.query(due) {}
        guard let claimed = try await outbox.claimDue(limit: 16, lease: lease).first else {
            throw TestSetupError("no message to claim")
        }
        return claimed
    }

    @Test(
        "an attempt that died with its daemon (kill -9) holds the message until its lease runs out, then the next daemon delivers it once; a stale attempt's late failure changes nothing"
    )
    func abandonedClaim() async throws {
        try await WebhookReceiver.run { receiver in
            let settings = try await TestDatabase.create()
            // The first daemon claims nothing itself (batches of none): the test's claims
            // below stand for its attempts, which die with it.
            let first = try TestGateway.make(settings: settings) { configuration in
                Self.configure(receiver)(&configuration)
                configuration.emailDelivery.batchSize = 0
            }
            let lease = Duration.seconds(3)
            let (tenant, abandoned, claimStarted) = try await first.application.test(.router) { client in
                let key = try await first.services.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                let gateway = TestGateway(server: first, client: client, projectKey: key)
                let tenant = try await Self.webhookTenant(gateway, receiver)
                let outbox = EmailOutboxRepository(database: first.database, logger: TestDatabase.logger)
                _ = try await gateway.signUp("lost@example.com", tenant: tenant)
                let sent = try await gateway.endUser(
                    "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "lost@example.com"], tenant: tenant)
                #expect(sent.status == .ok)

                // Two attempts their daemons never finished: one outlived its lease and was
                // claimed again by the other, which still holds it.
                let stale = try await Self.claimNow(outbox, first.database, tenant: tenant, lease: .zero)
                let claimStarted = ContinuousClock.now
                let abandoned = try await Self.claimNow(outbox, first.database, tenant: tenant, lease: lease)
                #expect(try await outbox.markFailed(stale, reason: "late", retryAfter: nil) == false)
                let status = try await outbox.messages(tenant: TenantScope(tenant))
                #expect(status.map(\.dead) == [false], "a stale failure dead-lettered the message")
                #expect(status.map(\.attempts) == [2])
                return (tenant, abandoned, claimStarted)
            }

            let second = try TestGateway.make(settings: settings, configure: Self.configure(receiver))
            let outbox = EmailOutboxRepository(database: second.database, logger: TestDatabase.logger)
            try await second.application.test(.router) { _ in
                try await Task.sleep(for: .milliseconds(300))
                let early = receiver.accepted.count
                // Measured from before the claim, so shorter than the claim's own age.
                if ContinuousClock.now - claimStarted < lease {
                    #expect(early == 0, "delivered while another attempt's lease held it")
                }
                let deliveries = try await receiver.waitForDeliveries(1)
                #expect(deliveries.map(\.messageId) == [abandoned.id])
                #expect(try await eventually { try await outbox.messages(tenant: TenantScope(tenant)).first?.delivered == true } != nil)
                #expect(try await outbox.markFailed(abandoned, reason: "late", retryAfter: nil) == false)
                try await Task.sleep(for: .milliseconds(300))
                let status = try await outbox.messages(tenant: TenantScope(tenant))
                #expect(status.map(\.delivered) == [true])
                #expect(status.map(\.dead) == [false])
                #expect(status.map(\.attempts) == [3])
                #expect(receiver.accepted.count == 1)
            }
        }
    }

    @Test("sendmail: an RFC 5322 message from the tenant's template on the program's standard input")
    func sendmail() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sendmail-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("sendmail")
        try """
        #!/bin/sh
        echo "$@" > '\(directory.path)/arguments'
        cat > '\(directory.path)/message.tmp' && mv '\(directory.path)/message.tmp' '\(directory.path)/message.eml'
        """.write(to: script, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: script.path)
        try await TestGateway.run(configure: {
            $0.emailDelivery.sendmailPath = script.path
            $0.emailDelivery.allowedFromDomains = ["acme.example"]
            $0.emailDelivery.pollInterval = .milliseconds(100)
        }) { gateway in
            let tenant = try await gateway.createTenant(
                #"""
                {"displayName":"Acme","allowPasswordSignup":true,"emailDelivery":{"channel":"SENDMAIL","from":"Acme <noreply@acme.example>",
                 "templates":{"resetPassword":{"subject":"Reset your %APP_NAME% password","body":"Hello,\n\n%LINK%\n"}},
                 "localizedTemplates":{"fr":{"resetPassword":{"subject":"Réinitialisez votre mot de passe %APP_NAME%","body":"%LINK%"}}}}}
                """#)
            _ = try await gateway.signUp("mail@example.com", tenant: tenant)
            #expect(
                try await gateway.endUser(
                    "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "mail@example.com"], tenant: tenant
                ).status == .ok)
            let file = directory.appendingPathComponent("message.eml")
            #expect(try await eventually { FileManager.default.fileExists(atPath: file.path) } != nil)
            let message = try String(contentsOf: file, encoding: .utf8)
            #expect(message.contains("\r\nTo: mail@example.com\r\n"))
            #expect(message.hasPrefix("From: Acme <noreply@acme.example>\r\n"))
            #expect(message.contains("\r\nSubject: Reset your Acme password\r\n"))
            #expect(message.contains("\r\n\r\nHello,\r\n\r\nhttp://localhost/__/auth/action?mode=resetPassword&oobCode="))
            let arguments = try String(contentsOf: directory.appendingPathComponent("arguments"), encoding: .utf8)
            #expect(arguments.trimmingCharacters(in: .whitespacesAndNewlines) == "-t -i")

            // X-Firebase-Locale (the SDKs' languageCode) picks the tenant's template in that language.
            try FileManager.default.removeItem(at: file)
            let french = try await gateway.client.execute(
                uri: "/v1/accounts:sendOobCode?key=\(TestGateway.apiKey)", method: .post,
                headers: [.contentType: "application/json", HTTPField.Name("X-Firebase-Locale")!: "fr-CA"],
                body: ByteBuffer(string: #"{"requestType":"PASSWORD_RESET","email":"mail@example.com","tenantId":"\#(tenant)"}"#))
            #expect(french.status == .ok, "\(String(buffer: french.body))")
            #expect(try await eventually { FileManager.default.fileExists(atPath: file.path) } != nil)
            let localized = try String(contentsOf: file, encoding: .utf8)
            let subject = "Réinitialisez votre mot de passe Acme"
            #expect(localized.contains("\r\nSubject: =?UTF-8?B?\(Data(subject.utf8).base64EncodedString())?=\r\n"))
        }
    }

    @Test("no channel configured: end users are told so, admins still get links")
    func noChannel() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("none@example.com", tenant: tenant)
            try await gateway.endUser(
                "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "none@example.com"], tenant: tenant
            )
            .expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED")
            let admin = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:sendOobCode",
                json: #"{"requestType":"PASSWORD_RESET","email":"none@example.com","returnOobLink":true}"#)
            #expect(admin.status == .ok)
        }
    }
}
