import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
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
                    let key = try await a.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
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
                let key = try await first.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
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
                #expect(try await eventually { try await outbox.messages(tenantId: tenant).allSatisfy(\.delivered) } != nil)
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
            $0.emailDelivery.pollInterval = .milliseconds(100)
        }) { gateway in
            let tenant = try await gateway.createTenant(
                #"""
                {"displayName":"Acme","allowPasswordSignup":true,"emailDelivery":{"channel":"SENDMAIL","from":"Acme <noreply@acme.example>",
                 "templates":{"resetPassword":{"subject":"Reset your %APP_NAME% password","body":"Hello,\n\n%LINK%\n"}}}}
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
