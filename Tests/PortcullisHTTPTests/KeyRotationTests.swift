import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
@testable import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
import Testing

@Suite("Signing-key rotation")
struct KeyRotationTests {
    static func kid(_ token: String) throws -> String {
        let header = try JSONValue.parse(Base64URL.decode(String(token.split(separator: ".")[0])) ?? [])
        guard case .string(let kid)? = header.value(at: ["kid"]) else { throw TestSetupError("no kid") }
        return kid
    }

    static func publishedKids(_ gateway: TestGateway, tenant: String) async throws -> Set<String> {
        let jwks = try await gateway.client.execute(
            uri: "/v1/projects/\(TestGateway.projectId)/tenants/\(tenant)/jwks", method: .get
        ).json()
        guard case .array(let keys)? = jwks.value(at: ["keys"]) else { return [] }
        return Set(keys.compactMap { if case .string(let kid)? = $0.value(at: ["kid"]) { kid } else { nil } })
    }

    @Test("a scheduled rotation publishes the next key in the JWKS before it signs anything")
    func scheduledRotationPublishesAhead() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"rot","allowPasswordSignup":true}"#)
            let first = try await gateway.signUp("rot@example.com", tenant: tenant)
            let oldKid = try Self.kid(first.idToken)
            let rotation = KeyRotationService(
                keys: SigningKeyRepository(database: gateway.server.database, logger: TestDatabase.logger),
                keyrings: gateway.server.tokens.keyrings, period: .zero, logger: TestDatabase.logger)
            await rotation.rotateDueKeys()

            let published = try await Self.publishedKids(gateway, tenant: tenant)
            #expect(published.count == 2 && published.contains(oldKid))
            // Verifiers holding the JWKS from before the rotation still know the signing key.
            let next = try await gateway.signIn("rot@example.com", tenant: tenant)
            #expect(try Self.kid(next.idToken) == oldKid)
        }
    }
}
