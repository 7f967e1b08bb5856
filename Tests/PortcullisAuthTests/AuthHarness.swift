import CoreMetrics
import Foundation
import Logging
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Synchronization
import Testing

@testable import PortcullisAuth

/// The application services on a fresh, migrated database, wired as `PortcullisServer`
/// wires them but without HTTP, every one reading one hand-set ``ManualClock``.
///
/// Service tests call the services directly: time rules move the clock, concurrency
/// tests call one service from many tasks at once, and assertions read the tables.
struct AuthHarness: Sendable {
    static let projectId = "test-project"
    /// One master key for the test process, so instances on one database open each other's keys.
    static let masterKey = MasterKey.generate()
    /// Cheap scrypt: the tests are about rules, not cost.
    static let hashing = ScryptParameters(logN: 10, r: 8, p: 1)

    let database: Database
    let clock: ManualClock
    /// The graph `PortcullisServer` runs, built the same way.
    let services: AuthServices
    let users: UserRepository
    let sessions: RefreshSessionRepository
    let signingKeys: SigningKeyRepository
    let adminKeyRepository: AdminKeyRepository
    /// The pools of the other instances this harness started, stopped when it ends.
    let instances: Instances

    var tenantCache: TenantSettingsCache { services.tenantSettings }
    var keyrings: KeyringService { services.keyrings }
    var revocation: RevocationCache { services.revocation }
    var tokens: TokenService { services.tokens }
    var accounts: AccountService { services.accounts }
    var adminAccounts: AdminAccountService { services.adminAccounts }
    var tenantAdmin: TenantAdminService { services.tenantAdmin }
    var adminKeys: AdminKeyService { services.adminKeys }

    /// One instance's services on `database`, with caches of its own that follow its commits.
    init(
        database: Database, clock: ManualClock, abuse: AbuseLimits = AbuseLimits(), jwksMaxAgeSeconds: Int = 300,
        instances: Instances = Instances()
    ) {
        let logger = TestDatabase.logger
        self.database = database
        self.clock = clock
        self.instances = instances
        var email = EmailDeliveryService.Configuration()
        email.allowedFromDomains = ["acme.example"]
        services = AuthServices(
            configuration: .init(
                projectId: Self.projectId, publicURL: "http://localhost", defaultAPIKey: nil, masterKey: Self.masterKey,
                passwordHashing: Self.hashing,
                // Room for every racing hash at once: a refusal would be the pool's answer, not the rule's.
                maximumPendingHashes: 1024, abuseGuard: AbuseGuard(limits: abuse), keyRotationPeriod: .seconds(30 * 86_400),
                jwksMaxAgeSeconds: jwksMaxAgeSeconds, cacheRefreshInterval: .seconds(3600), outboundAllowedNetworks: [],
                emailDelivery: email, clock: clock),
            database: database, logger: logger, metrics: NOOPMetricsHandler.instance)
        users = UserRepository(database: database, logger: logger)
        sessions = RefreshSessionRepository(database: database, logger: logger)
        signingKeys = SigningKeyRepository(database: database, logger: logger)
        adminKeyRepository = AdminKeyRepository(database: database, logger: logger)
    }

    /// Pools of further instances, each run until the harness ends.
    final class Instances: Sendable {
        private let pools = Mutex<[Task<Void, Never>]>([])

        /// Runs `database`'s pool until ``stop()``.
        func run(_ database: Database) {
            let task = Task { await database.run() }
            pools.withLock { $0.append(task) }
        }

        func stop() async {
            for task in pools.withLock({ $0 }) {
                task.cancel()
                await task.value
            }
        }
    }

    /// A whole second: the ID tokens' `auth_time` and `iat` then fall exactly on the clock.
    static func start() -> Timestamp { Timestamp(seconds: SystemClock().now().seconds) }

    /// How many harnesses run at once. Each holds a pool of up to four connections, and every
    /// test of the package shares one server's `max_connections` (500 in `scripts/test`):
    /// unbounded, these suites alongside the HTTP ones ran out of connections.
    static let slots = Slots(6)

    /// Runs `body` with the services on a new database.
    static func run(
        abuse: AbuseLimits = AbuseLimits(), jwksMaxAgeSeconds: Int = 300, _ body: @Sendable (AuthHarness) async throws -> Void
    ) async throws {
        await slots.acquire()
        do {
            try await TestDatabase.withDatabase { database in
                let instances = Instances()
                do {
                    try await body(
                        AuthHarness(
                            database: database, clock: ManualClock(start()), abuse: abuse, jwksMaxAgeSeconds: jwksMaxAgeSeconds,
                            instances: instances))
                } catch {
                    await instances.stop()
                    throw error
                }
                await instances.stop()
            }
        } catch {
            await slots.release()
            throw error
        }
        await slots.release()
    }

    /// Another instance on the same database: its own pool, caches and clock. Nothing
    /// tells its caches of this one's commits (no listener runs): it stands for an instance
    /// whose NOTIFY has not arrived.
    func instance(clock: ManualClock) -> AuthHarness {
        let other = Database(settings: database.settings, logger: TestDatabase.logger, clock: clock)
        instances.run(other)
        return AuthHarness(database: other, clock: clock, instances: instances)
    }

    /// This instance's sweeper, on the harness's clock.
    func sweeper(retention: Duration = .seconds(30 * 86_400), batchSize: Int) -> RetentionSweeper {
        RetentionSweeper(
            sessions: sessions, actionCodes: ActionCodeRepository(database: database, logger: TestDatabase.logger),
            outbox: EmailOutboxRepository(database: database, logger: TestDatabase.logger), retention: retention,
            batchSize: batchSize, clock: clock, schema: SchemaGate(), logger: TestDatabase.logger)
    }

    /// Creates a tenant from a JSON body, as `POST …/tenants` does, and returns its id.
    ///
    /// It signs with ES256 unless the body names an algorithm: an RSA key costs up to a
    /// second of CPU on NIO's shared blocking pool, which every suite of the test process
    /// waits on, and these tests make a great many keys.
    func createTenant(_ body: String = #"{"displayName":"t","allowPasswordSignup":true}"#) async throws -> String {
        var settings = try json(body).objectValue ?? [:]
        if settings["signingAlgorithm"] == nil { settings["signingAlgorithm"] = "ES256" }
        return try await tenantAdmin.create(body: .object(settings), actor: "test").id
    }

    /// Signs up with email and password.
    func signUp(_ email: String, _ password: String = "correct horse", tenant: String?) async throws -> AccountService.SignedIn {
        try await accounts.signUp(
            tenantId: tenant, email: email, password: password, profile: .init(), idToken: nil, client: nil)
    }

    /// Signs in with email and password.
    func signIn(_ email: String, _ password: String = "correct horse", tenant: String?) async throws -> AccountService.SignedIn {
        try await accounts.signIn(tenant: TenantScope(tenant), email: email, password: password, client: nil)
    }

    /// The number of rows `sql` (a `SELECT count(*)`) counts.
    func count(_ query: PostgresQuery) async throws -> Int64 {
        let rows = try await database.pool().client.query(query)
        for try await count in rows.decode(Int64.self) { return count }
        return 0
    }
}

/// A counting semaphore for tasks.
actor Slots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    /// Takes a slot, waiting for one to be released when none is free.
    func acquire() async {
        guard free == 0 else {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the slot to the longest waiter, or frees it.
    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// What one racing call came to: success, or the wire code it failed with.
enum Outcome<Value: Sendable>: Sendable {
    case success(Value)
    case failure(AuthError.Code)

    var value: Value? { if case .success(let value) = self { value } else { nil } }
    var code: AuthError.Code? { if case .failure(let code) = self { code } else { nil } }
}

/// Runs `count` calls of `body` at once and returns their outcomes, in index order.
///
/// Every `AuthError` is an outcome to assert on, and so is a `Conflict` (by the wire code
/// the error envelope gives it); any other error fails the race.
func race<Value: Sendable>(
    _ count: Int, _ body: @escaping @Sendable (Int) async throws -> Value
) async throws -> [Outcome<Value>] {
    try await withThrowingTaskGroup(of: (Int, Outcome<Value>).self) { group in
        for index in 0..<count {
            group.addTask {
                do {
                    return (index, .success(try await body(index)))
                } catch let error as AuthError {
                    return (index, .failure(error.code))
                } catch let conflict as Conflict {
                    return (index, .failure(AuthError(conflict).code))
                }
            }
        }
        var outcomes: [Outcome<Value>?] = Array(repeating: nil, count: count)
        for try await (index, outcome) in group { outcomes[index] = outcome }
        return outcomes.compactMap { $0 }
    }
}

extension Array {
    /// How many outcomes failed with each code.
    func codes<Value>() -> [AuthError.Code: Int] where Element == Outcome<Value> {
        reduce(into: [:]) { counts, outcome in if let code = outcome.code { counts[code, default: 0] += 1 } }
    }

    /// The values of the calls that succeeded.
    func successes<Value>() -> [Value] where Element == Outcome<Value> { compactMap(\.value) }
}

/// A flag one task sets and others read.
final class Flag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}

/// A count tasks add to at once.
final class Tally: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

/// A JSON body from its text.
func json(_ text: String) throws -> JSONValue {
    try JSONValue.parse(Array(text.utf8))
}

/// The payload of an ID token, decoded without verification.
func claims(of idToken: String) throws -> JSONValue {
    try JSONValue.parse(Base64URL.decode(String(idToken.split(separator: ".")[1])) ?? [])
}

/// The `kid` of a token's header.
func kid(of token: String) throws -> String {
    let header = try JSONValue.parse(Base64URL.decode(String(token.split(separator: ".")[0])) ?? [])
    guard case .string(let kid)? = header.value(at: ["kid"]) else { throw TestSetupError("no kid in \(token)") }
    return kid
}
