import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Synchronization
import Testing

@testable import PortcullisAuth

@Suite("Signing keys made ahead")
struct SigningKeyPoolTests {
    @Test("a filled pool hands keys out without making one on the caller's path, then refills")
    func takesWithoutMaking() async throws {
        let maker = Maker()
        let pool = SigningKeyPool(size: 2, generate: maker.generate)
        try await Self.running(pool) {
            try #require(
                try await eventually(within: .seconds(30)) {
                    TenantSettings.SigningAlgorithm.allCases.allSatisfy { pool.available($0) == 2 }
                } != nil)
            let made = maker.made
            // Key generation now blocks: a take that needed it would not return.
            maker.hold()
            let first = try await Self.within(.seconds(5)) { try await pool.take(.rs256) }
            let second = try await Self.within(.seconds(5)) { try await pool.take(.rs256) }
            #expect(first.kid != second.kid)
            #expect(maker.made == made, "a take made a key")
            #expect(pool.available(.rs256) == 0)
            maker.release()
            try #require(try await eventually(within: .seconds(30)) { pool.available(.rs256) == 2 } != nil)
            #expect(maker.made == made + 2)
        }
    }

    @Test("a burst of new tenants that empties the pool still gets a key each, every one different, and the pool refills")
    func burstDrainsAndRefills() async throws {
        let maker = Maker()
        let pool = SigningKeyPool(size: 2, generate: maker.generate)
        try await Self.running(pool) {
            try #require(try await eventually(within: .seconds(30)) { pool.available(.es256) == 2 } != nil)
            let kids = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<7 { group.addTask { try await pool.take(.es256).kid } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(kids).count == 7)
            try #require(try await eventually(within: .seconds(30)) { pool.available(.es256) == 2 } != nil)
        }
    }

    @Test("a new tenant's first keyring takes a key made ahead: its first request makes none")
    func firstKeyFromPool() async throws {
        try await Self.withFilledPool { harness, pool, maker in
            let keyrings = KeyringService(
                keys: harness.signingKeys, tenants: harness.tenantCache, masterKey: AuthHarness.masterKey,
                clock: harness.clock, logger: TestDatabase.logger, generateKey: { try await pool.take($0) })
            let tenant = TenantScope(try await harness.createTenant())
            // Counted, not held: the first key is made in a task no caller's cancellation
            // reaches (`KeyringService`), so a held key would hang the test, not fail it.
            let keyring = try await Maker.$onRequestPath.withValue(true) { try await keyrings.keyring(tenant: tenant) }
            #expect(maker.madeOnRequestPath == 0, "the first request made a key")
            #expect(try await harness.signingKeys.all(tenant: tenant).map(\.kid) == [keyring.activeKid])
        }
    }

    @Test("a tenant created while a key is ready-made gets it with its creation: no first request stores one, here or elsewhere")
    func firstKeyWithCreation() async throws {
        try await Self.withFilledPool { harness, pool, maker in
            // An instance whose keys come from `pool`, and its tenant administration.
            func instance(_ pool: SigningKeyPool) -> (KeyringService, TenantAdminService) {
                let keyrings = KeyringService(
                    keys: harness.signingKeys, tenants: harness.tenantCache, masterKey: AuthHarness.masterKey,
                    clock: harness.clock, logger: TestDatabase.logger, generateKey: { try await pool.take($0) },
                    keyReady: { pool.available($0) > 0 })
                let admin = TenantAdminService(
                    tenants: TenantRepository(database: harness.database, logger: TestDatabase.logger),
                    projectConfig: ProjectConfigRepository(
                        database: harness.database, projectId: AuthHarness.projectId, logger: TestDatabase.logger),
                    allowedFromDomains: [], keyrings: keyrings)
                return (keyrings, admin)
            }
            let body = JSONValue.object(["displayName": .string("new"), "signingAlgorithm": .string("RS256")])
            let (keyrings, admin) = instance(pool)
            let tenant = TenantScope(try await admin.create(body: body, actor: "test").id)
            // Stored before the creation answered, and held by this instance.
            let stored = try await harness.signingKeys.all(tenant: tenant).map(\.kid)
            #expect(stored.count == 1)
            #expect(keyrings.cached(tenant: tenant)?.activeKid == stored.first)
            // Another instance's first keyring reads it and makes none.
            let other = KeyringService(
                keys: harness.signingKeys, tenants: harness.tenantCache, masterKey: AuthHarness.masterKey,
                clock: harness.clock, logger: TestDatabase.logger, generateKey: { _ in throw KeyMade() })
            #expect(try await other.keyring(tenant: tenant).activeKid == stored.first)

            // With none ready-made, a creation makes no key: its first request takes one.
            let (emptyKeyrings, emptyAdmin) = instance(SigningKeyPool(size: 0, generate: maker.generate))
            let later = TenantScope(try await emptyAdmin.create(body: body, actor: "test").id)
            #expect(try await harness.signingKeys.all(tenant: later).isEmpty)
            #expect(emptyKeyrings.cached(tenant: later) == nil)
        }
    }

    struct KeyMade: Error {}

    /// Runs `body` beside a harness, with a running pool of one key per algorithm, filled, and its maker.
    private static func withFilledPool(_ body: @Sendable (AuthHarness, SigningKeyPool, Maker) async throws -> Void) async throws {
        try await AuthHarness.run { harness in
            let maker = Maker()
            let pool = SigningKeyPool(size: 1, generate: maker.generate)
            try await running(pool) {
                try #require(
                    try await eventually(within: .seconds(30)) {
                        TenantSettings.SigningAlgorithm.allCases.allSatisfy { pool.available($0) == 1 }
                    } != nil)
                try await body(harness, pool, maker)
            }
        }
    }

    /// Runs `pool`'s service while `body` runs.
    private static func running(_ pool: SigningKeyPool, _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await pool.run() }
            defer { group.cancelAll() }
            try await body()
        }
    }

    /// `body`'s value, or a failure when it takes longer than `limit`.
    private static func within<Value: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw Timeout() }
            return value
        }
    }

    struct Timeout: Error {}
}

/// Real keys, counted, whose making the test can hold up.
private final class Maker: Sendable {
    private let state = Mutex((made: 0, madeOnRequestPath: 0, held: false))
    /// Set around a request: the keys made in it (or in tasks it starts) are counted apart.
    @TaskLocal static var onRequestPath = false

    var made: Int { state.withLock { $0.made } }
    var madeOnRequestPath: Int { state.withLock { $0.madeOnRequestPath } }
    func hold() { state.withLock { $0.held = true } }
    func release() { state.withLock { $0.held = false } }

    @Sendable func generate(_ algorithm: TenantSettings.SigningAlgorithm) async throws -> SigningKey {
        while state.withLock({ $0.held }) { try await Task.sleep(for: .milliseconds(5)) }
        let key = try await KeyringService.generate(algorithm)
        state.withLock {
            $0.made += 1
            if Self.onRequestPath { $0.madeOnRequestPath += 1 }
        }
        return key
    }
}
