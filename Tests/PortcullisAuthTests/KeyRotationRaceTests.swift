import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth

/// Key rotations that race: scheduled passes of several instances, and an
/// operator's rotation against scheduled ones.
@Suite("Key rotation races")
struct KeyRotationRaceTests {
    static let period = 30 * 86_400

    /// A tenant whose first key is a period and a second old on `harness`'s clock.
    static func dueTenant(_ harness: AuthHarness) async throws -> (tenant: String, firstKid: String) {
        let tenant = try await harness.createTenant()
        let session = try await harness.signUp("keys@example.com", tenant: tenant)
        harness.clock.advance(seconds: Int64(period) + 1)
        return (tenant, try kid(of: session.tokens.idToken))
    }

    @Test("20 first requests of a new tenant at once on one instance: one key is made, and all of them sign with it")
    func firstKeyMadeOnce() async throws {
        try await AuthHarness.run { harness in
            let tenant = TenantScope(try await harness.createTenant())
            let made = Tally()
            let keyrings = KeyringService(
                keys: harness.signingKeys, tenants: harness.tenantCache, masterKey: AuthHarness.masterKey, clock: harness.clock,
                logger: TestDatabase.logger,
                generateKey: { algorithm in
                    made.increment()
                    return try await KeyringService.generate(algorithm)
                })
            let outcomes = try await race(20) { _ in try await keyrings.keyring(tenant: tenant).activeKid }
            #expect(outcomes.codes().isEmpty)
            #expect(Set(outcomes.successes()).count == 1)
            #expect(made.value == 1, "\(made.value) keys made for one tenant")
        }
    }

    @Test("24 scheduled rotations of one due tenant on three instances at once: exactly one publishes a next key")
    func scheduledAcrossInstances() async throws {
        try await AuthHarness.run { harness in
            let (tenant, first) = try await Self.dueTenant(harness)
            let instances = [harness, harness.instance(clock: harness.clock), harness.instance(clock: harness.clock)]
            let outcomes = try await race(24) { index in
                try await instances[index % 3].keyrings.scheduleRotation(tenant: TenantScope(tenant), dueAfterSeconds: Self.period)
            }
            #expect(outcomes.codes().isEmpty)
            #expect(outcomes.successes().filter { $0 }.count == 1)
            let keys = try await harness.signingKeys.all(tenant: TenantScope(tenant))
            #expect(keys.count == 2)
            let now = harness.clock.now().date
            #expect(keys.filter { $0.state(at: now) == .pending }.count == 1)
            #expect(keys.filter { $0.state(at: now) == .active }.map(\.kid) == [first])
        }
    }

    @Test("5 operator rotations racing 15 scheduled ones: the last operator key signs, no scheduled key is left to take over")
    func operatorRacesScheduled() async throws {
        try await AuthHarness.run { harness in
            for _ in 0..<3 {
                let (tenant, first) = try await Self.dueTenant(harness)
                let outcomes = try await race(20) { index -> String? in
                    guard index % 4 == 0 else {
                        _ = try await harness.keyrings.scheduleRotation(tenant: TenantScope(tenant), dueAfterSeconds: Self.period)
                        return nil
                    }
                    return try await harness.keyrings.rotate(tenant: TenantScope(tenant), actor: "operator \(index)").activeKid
                }
                #expect(outcomes.codes().isEmpty)
                let operatorKids = Set(outcomes.successes().compactMap { $0 })

                // One newest key, made by an operator; whatever a scheduled pass published was withdrawn.
                let now = harness.clock.now()
                let keys = try await harness.signingKeys.all(tenant: TenantScope(tenant))
                let newest = keys.filter { $0.retireTime == nil }
                #expect(newest.count == 1)
                let signing = try #require(newest.first)
                #expect(operatorKids.contains(signing.kid) && signing.kid != first)
                #expect(keys.allSatisfy { $0.state(at: now.date) != .pending })
                let published = try await harness.signingKeys.published(tenant: TenantScope(tenant), at: now.date)
                // Every key still published has signed: a withdrawn scheduled key (which would sign from now + lead) is gone.
                #expect(published.allSatisfy { Timestamp($0.signsFrom) <= now }, "a withdrawn key is still published")
                #expect(published.contains { $0.kid == first }, "the replaced key stays published for its tokens")

                // A fresh keyring signs with it, now and after any scheduled lead would have passed.
                harness.keyrings.invalidateAll()
                let keyring = try await harness.keyrings.keyring(tenant: TenantScope(tenant))
                // No next key: the active one signs now and after any scheduled lead would have passed.
                #expect(keyring.next == nil)
                #expect(keyring.activeKid == signing.kid)
                harness.clock.advance(seconds: Int64(harness.keyrings.rotationLeadSeconds) + 1)
                #expect(try kid(of: try await harness.signIn("keys@example.com", tenant: tenant).tokens.idToken) == signing.kid)
            }
        }
    }
}
