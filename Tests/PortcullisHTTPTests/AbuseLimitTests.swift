import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisTestSupport
import Testing

@Suite("Abuse limits")
struct AbuseLimitTests {
    @Test("a burst of 40 concurrent wrong passwords for one account: at most the limit (10) are tried, the rest are refused before hashing")
    func concurrentGuessesCountBeforeHashing() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"burst","allowPasswordSignup":true}"#)
            _ = try await gateway.signUp("burst@example.com", tenant: tenant)
            let messages = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await gateway.endUser(
                            "accounts:signInWithPassword", ["email": "burst@example.com", "password": .string("guess \(index)")],
                            tenant: tenant
                        ).errorMessage
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            let tried = messages.filter { $0 == "INVALID_PASSWORD" }.count
            let refused = messages.filter { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }.count
            #expect(tried <= 10, "\(tried) guesses were hashed")
            #expect(tried + refused == 40, "\(messages)")
        }
    }

    /// An end user's password-reset request as the client `forwardedFor` (behind a trusted proxy).
    static func resetRequest(_ gateway: TestGateway, tenant: String, email: String, as forwardedFor: String) async throws -> String? {
        try await gateway.client.execute(
            uri: "/v1/accounts:sendOobCode?key=\(TestGateway.apiKey)", method: .post,
            headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: forwardedFor],
            body: ByteBuffer(string: #"{"requestType":"PASSWORD_RESET","email":"\#(email)","tenantId":"\#(tenant)"}"#)
        ).errorMessage
    }

    @Test(
        "email actions per client address: every end-user request counts, whatever the address; others and admins go on; a burst gets the limit through"
    )
    func emailActionsPerClient() async throws {
        try await TestGateway.run(
            live: true,
            configure: {
                $0.abuseGuard = AbuseGuard(limits: AbuseLimits(emailActionsPerIP: 3, windowSeconds: 900))
                $0.trustedProxies = [IPNetwork("127.0.0.0/8")!]
            }
        ) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"mail","allowPasswordSignup":true}"#)
            // Created by an admin without a password: no hash on the way, which a parallel run can
            // starve past the live test client's read timeout (hashing threads run under SCHED_IDLE).
            let created = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts", json: #"{"email":"known@example.com"}"#)
            #expect(created.status == .ok)
            for index in 0..<3 {
                let message = try await Self.resetRequest(gateway, tenant: tenant, email: "nobody\(index)@example.com", as: "198.51.100.7")
                #expect(message == "EMAIL_NOT_FOUND")
            }
            #expect(
                try await Self.resetRequest(gateway, tenant: tenant, email: "known@example.com", as: "198.51.100.7")
                    == "TOO_MANY_ATTEMPTS_TRY_LATER")
            #expect(
                try await Self.resetRequest(gateway, tenant: tenant, email: "nobody@example.com", as: "198.51.100.8") == "EMAIL_NOT_FOUND")
            // An admin's request is not an end user's: not counted, not refused.
            let admin = try await gateway.client.execute(
                uri: "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/accounts:sendOobCode", method: .post,
                headers: [
                    .contentType: "application/json", .authorization: "Bearer \(gateway.projectKey)",
                    HTTPField.Name("X-Forwarded-For")!: "198.51.100.7",
                ],
                body: ByteBuffer(string: #"{"requestType":"PASSWORD_RESET","email":"known@example.com","returnOobLink":true}"#))
            #expect(admin.status == .ok, "\(String(buffer: admin.body))")

            let burst = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        try await Self.resetRequest(gateway, tenant: tenant, email: "burst\(index)@example.com", as: "198.51.100.9")
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(burst.filter { $0 == "EMAIL_NOT_FOUND" }.count == 3, "\(burst)")
            #expect(burst.filter { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }.count == 9, "\(burst)")
        }
    }
}
