import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth
@testable import PortcullisHTTP

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

    static func rotation(_ gateway: TestGateway, schema: SchemaGate = SchemaGate()) -> KeyRotationService {
        KeyRotationService(
            keys: SigningKeyRepository(database: gateway.server.database, logger: TestDatabase.logger),
            keyrings: gateway.server.services.tokens.keyrings, period: .zero, schema: schema, logger: TestDatabase.logger)
    }

    @Test("the rotation service starts its first pass when the schema is current, not after a fixed pause")
    func rotationWaitsForTheSchemaOnly() async throws {
        try await TestGateway.run { gateway in
            // ES256: an RSA key pair takes seconds to generate in a debug build on a loaded machine.
            let tenant = try await gateway.createTenant(#"{"displayName":"gate","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
            _ = try await gateway.signUp("gate@example.com", tenant: tenant)
            let schema = SchemaGate()
            let service = Self.rotation(gateway, schema: schema)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                try await Task.sleep(for: .milliseconds(300))
                #expect(try await Self.publishedKids(gateway, tenant: tenant).count == 1, "rotated before the schema was current")
                schema.open()
                // Well inside the hourly pass it would otherwise wait for.
                #expect(
                    try await eventually(within: .seconds(30)) { try await Self.publishedKids(gateway, tenant: tenant).count == 2 } != nil)
                group.cancelAll()
            }
        }
    }

    static func keyStates(_ gateway: TestGateway, tenant: String) async throws -> [String: String] {
        let keys = try await gateway.send(.get, "\(gateway.tenants)/\(tenant)/keys").json()
        guard case .array(let listed)? = keys.value(at: ["keys"]) else { return [:] }
        var states: [String: String] = [:]
        for key in listed {
            if case .string(let kid)? = key.value(at: ["kid"]), case .string(let state)? = key.value(at: ["state"]) { states[kid] = state }
        }
        return states
    }

    @Test("a scheduled rotation publishes the next key in the JWKS before it signs anything")
    func scheduledRotationPublishesAhead() async throws {
        // The next key signs 4 s after it is published, by the gateway's clock.
        let clock = ManualClock()
        try await TestGateway.run(configure: {
            $0.jwksMaxAgeSeconds = 2
            $0.clock = clock
        }) { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"rot","allowPasswordSignup":true}"#)
            let first = try await gateway.signUp("rot@example.com", tenant: tenant)
            let oldKid = try Self.kid(first.idToken)
            // Due: older than the period (zero) by the clock.
            clock.advance(seconds: 1)
            await Self.rotation(gateway).rotateDueKeys()

            let kids = try await Self.publishedKids(gateway, tenant: tenant)
            #expect(kids.count == 2 && kids.contains(oldKid))
            guard let newKid = kids.subtracting([oldKid]).first else { throw TestSetupError("no new key") }
            #expect(try await Self.keyStates(gateway, tenant: tenant) == [oldKid: "ACTIVE", newKid: "PENDING"])
            // Verifiers holding the JWKS from before the rotation still know the signing key.
            let next = try await gateway.signIn("rot@example.com", tenant: tenant)
            #expect(try Self.kid(next.idToken) == oldKid)

            // Once the lead has passed, this instance's cached keyring switches by itself.
            clock.advance(seconds: 5)
            let switched = try await eventually(within: .seconds(10)) {
                try Self.kid(try await gateway.signIn("rot@example.com", tenant: tenant).idToken) == newKid
            }
            #expect(switched != nil)
            #expect(try await Self.keyStates(gateway, tenant: tenant) == [oldKid: "RETIRED", newKid: "ACTIVE"])
            // Tokens the old key signed still verify: it stays published.
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(first.idToken)], tenant: tenant).status == .ok)
        }
    }

    @Test("a tenant's first key, made by racing first requests, signs for every one of them")
    func racingFirstRequests() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"race","enableAnonymousUser":true}"#)
            let statuses = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await gateway.endUser("accounts:signUp", [:], tenant: tenant).errorMessage ?? "ok" }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == "ok" }, "\(statuses)")
            #expect(try await Self.publishedKids(gateway, tenant: tenant).count == 1)
        }
    }

    @Test("an operator's rotation is immediate, and replaces a key a scheduled rotation had only published")
    func immediateRotationSupersedesPending() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"leak","allowPasswordSignup":true}"#)
            let first = try await gateway.signUp("leak@example.com", tenant: tenant)
            let oldKid = try Self.kid(first.idToken)
            await Self.rotation(gateway).rotateDueKeys()
            let pending = try await Self.publishedKids(gateway, tenant: tenant).subtracting([oldKid])
            #expect(pending.count == 1)

            let rotated = try await gateway.send(.post, "\(gateway.tenants)/\(tenant)/keys:rotate").json()
            guard case .string(let leakKid)? = rotated.value(at: ["kid"]) else { throw TestSetupError("no kid") }
            #expect(!pending.contains(leakKid) && leakKid != oldKid)
            #expect(try Self.kid(try await gateway.signIn("leak@example.com", tenant: tenant).idToken) == leakKid)
            let kids = try await Self.publishedKids(gateway, tenant: tenant)
            #expect(kids == [oldKid, leakKid], "the never-used pending key is withdrawn")
        }
    }
}
