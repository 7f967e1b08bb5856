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
import PortcullisTestSupport
import Testing

/// A gateway whose tenant delivers email actions to a local webhook receiver, fast retries.
struct EmailActionFixture {
    let gateway: TestGateway
    let receiver: WebhookReceiver
    let tenant: String

    static func run(
        tenantSettings: String = "", configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (EmailActionFixture) async throws -> Void
    ) async throws {
        try await WebhookReceiver.run { receiver in
            try await TestGateway.run(configure: {
                $0.outboundAllowedNetworks = [IPNetwork("127.0.0.0/8")].compactMap { $0 }
                $0.emailDelivery.retryBaseDelay = .milliseconds(50)
                $0.emailDelivery.pollInterval = .milliseconds(100)
                configure(&$0)
            }) { gateway in
                let tenant = try await gateway.createTenant(
                    """
                    {"displayName":"Acme","allowPasswordSignup":true,"authorizedDomains":["app.example.com"],
                     "emailDelivery":{"channel":"WEBHOOK","webhookUri":"\(receiver.url)"}\(tenantSettings)}
                    """)
                try await body(EmailActionFixture(gateway: gateway, receiver: receiver, tenant: tenant))
            }
        }
    }

    /// An end user's `accounts:sendOobCode`.
    func send(_ body: [String: JSONValue]) async throws -> TestResponse {
        try await gateway.endUser("accounts:sendOobCode", body, tenant: tenant)
    }

    /// An admin's `accounts:sendOobCode` with `returnOobLink`: the link's code.
    func adminCode(_ type: String, email: String, extra: [String: JSONValue] = [:]) async throws -> String {
        var body: [String: JSONValue] = ["requestType": .string(type), "email": .string(email), "returnOobLink": true]
        body.merge(extra) { $1 }
        let response = try await gateway.send(
            .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:sendOobCode",
            json: JSONValue.object(body).serialized())
        guard response.status == .ok, case .string(let link)? = try response.json().value(at: ["oobLink"]),
            let code = URLComponents(string: link)?.queryItems?.first(where: { $0.name == "oobCode" })?.value
        else { throw TestSetupError("no link: \(String(buffer: response.body))") }
        return code
    }

    /// The user's record as `accounts:lookup` shows it to themselves.
    func lookup(_ idToken: String) async throws -> JSONValue? {
        let response = try await gateway.endUser("accounts:lookup", ["idToken": .string(idToken)], tenant: tenant)
        if case .array(let users)? = try response.json().value(at: ["users"]) { return users.first }
        return nil
    }
}
