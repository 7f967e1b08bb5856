import Hummingbird
import HummingbirdTesting
import PortcullisCore
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
}
