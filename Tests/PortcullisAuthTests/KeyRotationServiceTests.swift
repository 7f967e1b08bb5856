import Foundation
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// Scheduled key rotation by the clock: when a tenant's key is due, when the next key
/// starts signing, and how long a retired key stays published.
@Suite("Key rotation service")
struct KeyRotationServiceTests {
    static let period: Int64 = 30 * 86_400

    static func rotation(_ harness: AuthHarness) -> KeyRotationService {
        KeyRotationService(
            keys: harness.signingKeys, keyrings: harness.keyrings, period: .seconds(period), schema: SchemaGate(),
            logger: TestDatabase.logger)
    }

    /// The kid the tenant signs with now, through a real sign-in.
    static func signingKid(_ harness: AuthHarness, tenant: String) async throws -> String {
        try kid(of: try await harness.signIn("keys@example.com", tenant: tenant).tokens.idToken)
    }

    @Test("a key is due once older than the period, not at it; the next key is published at once and signs after the lead")
    func scheduledRotationDueTimes() async throws {
        // JWKS max-age 300 s: the next key signs 600 s after it is published.
        try await AuthHarness.run(jwksMaxAgeSeconds: 300) { harness in
            let tenant = try await harness.createTenant()
            _ = try await harness.signUp("keys@example.com", tenant: tenant)
            let first = try await Self.signingKid(harness, tenant: tenant)
            let rotation = Self.rotation(harness)

            harness.clock.advance(seconds: Self.period)
            await rotation.rotateDueKeys()
            #expect(try await harness.signingKeys.all(tenant: TenantScope(tenant)).count == 1, "rotated at exactly the period")

            harness.clock.advance(seconds: 1)
            let published = harness.clock.now()
            await rotation.rotateDueKeys()
            let keys = try await harness.signingKeys.all(tenant: TenantScope(tenant))
            #expect(keys.count == 2)
            let next = try #require(keys.first { $0.kid != first })
            #expect(next.state(at: published.date) == .pending)
            #expect(Timestamp(next.signsFrom) == published.adding(seconds: 600))
            let keyring = try await harness.keyrings.keyring(tenant: TenantScope(tenant))
            #expect(keyring.next?.kid == next.kid, "published in the JWKS before it signs")
            // A second pass finds nothing due: the next key is not old, it is not even signing yet.
            await rotation.rotateDueKeys()
            #expect(try await harness.signingKeys.all(tenant: TenantScope(tenant)).count == 2)

            harness.clock.advance(seconds: 599)
            #expect(try await Self.signingKid(harness, tenant: tenant) == first)
            harness.clock.advance(seconds: 1)
            #expect(try await Self.signingKid(harness, tenant: tenant) == next.kid, "the cached keyring switches by the clock")

            // The next rotation is due a period after the new key started signing.
            harness.clock.advance(seconds: Self.period)
            await rotation.rotateDueKeys()
            #expect(try await harness.signingKeys.all(tenant: TenantScope(tenant)).count == 2)
            harness.clock.advance(seconds: 1)
            await rotation.rotateDueKeys()
            #expect(try await harness.signingKeys.all(tenant: TenantScope(tenant)).count == 3)
        }
    }

    @Test("a retired key stays published for the ID-token lifetime plus five minutes after it stops signing, then goes")
    func retiredKeyPublication() async throws {
        try await AuthHarness.run(jwksMaxAgeSeconds: 300) { harness in
            let tenant = try await harness.createTenant()
            let session = try await harness.signUp("keys@example.com", tenant: tenant)
            let old = try kid(of: session.tokens.idToken)
            harness.clock.advance(seconds: Self.period + 1)
            #expect(try await harness.keyrings.scheduleRotation(tenant: TenantScope(tenant), dueAfterSeconds: Int(Self.period)))
            // The old key stops signing after the 600 s lead; its last token lives 3600 s; 300 s of skew.
            let retired = harness.clock.now().adding(seconds: 600)
            let lastToken = try await harness.tokens.mintIDToken(
                for: session.user, authTime: retired.seconds - 1, signInProvider: "password", now: retired.seconds - 1)
            #expect(try kid(of: lastToken.token) == old)

            func publishedKids(at instant: Timestamp) async throws -> Set<String> {
                Set(try await harness.signingKeys.published(tenant: TenantScope(tenant), at: instant.date).map(\.kid))
            }
            #expect(try await publishedKids(at: retired.adding(seconds: 3600 + 299)).contains(old))
            #expect(try await !publishedKids(at: retired.adding(seconds: 3600 + 300)).contains(old))

            // A verifier that reloads its keys in time still verifies the old key's last token until it expires.
            harness.clock.set(retired.adding(seconds: 3598))
            harness.keyrings.invalidateAll()
            #expect(try await harness.tokens.verifyIDToken(lastToken.token).subject == session.user.uid)
        }
    }

    @Test("an operator's rotation restarts the period: the key it makes is due a period after it, not the old key's")
    func operatorRotationRestartsThePeriod() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            _ = try await harness.signUp("keys@example.com", tenant: tenant)
            let rotation = Self.rotation(harness)
            harness.clock.advance(seconds: 20 * 86_400)
            let rotated = try await harness.keyrings.rotate(tenant: TenantScope(tenant), actor: "test")
            #expect(try await Self.signingKid(harness, tenant: tenant) == rotated.activeKid, "immediate: no lead")

            harness.clock.advance(seconds: 10 * 86_400 + 1)
            await rotation.rotateDueKeys()
            #expect(try await harness.signingKeys.all(tenant: TenantScope(tenant)).count == 2, "not due by the replaced key's age")
            harness.clock.advance(seconds: 20 * 86_400)
            await rotation.rotateDueKeys()
            #expect(try await harness.signingKeys.all(tenant: TenantScope(tenant)).count == 3)
        }
    }

    @Test("an operator's rotation withdraws the key a scheduled one published: it leaves the JWKS, never signs, and is listed RETIRED")
    func operatorRotationWithdrawsPendingKey() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            _ = try await harness.signUp("keys@example.com", tenant: tenant)
            harness.clock.advance(seconds: Self.period + 1)
            #expect(try await harness.keyrings.scheduleRotation(tenant: TenantScope(tenant), dueAfterSeconds: Int(Self.period)))
            let pending = try #require(try await harness.keyrings.keyring(tenant: TenantScope(tenant)).next?.kid)

            harness.clock.advance(seconds: 60)
            let rotated = try await harness.keyrings.rotate(tenant: TenantScope(tenant), actor: "operator")
            #expect(rotated.next == nil)
            guard case .array(let published)? = rotated.jwks.value(at: ["keys"]) else { throw TestSetupError("no JWKS") }
            #expect(!published.contains { $0.value(at: ["kid"]) == .string(pending) })
            let now = harness.clock.now().date
            let states = Dictionary(
                uniqueKeysWithValues: try await harness.keyrings.list(tenant: TenantScope(tenant)).map { ($0.kid, $0.state(at: now)) })
            #expect(states[pending] == .retired, "listed \(states[pending].map(\.rawValue) ?? "nothing") for the withdrawn key")
            #expect(states[rotated.activeKid] == .active)
            // Once the withdrawn key's lead has passed, the operator's key still signs.
            harness.clock.advance(seconds: Int64(harness.keyrings.rotationLeadSeconds))
            #expect(try await Self.signingKid(harness, tenant: tenant) == rotated.activeKid)
        }
    }
}
