import Foundation
import PortcullisClient
import PortcullisTestSupport
import Synchronization

/// The client SDK against the real daemon: `Auth` instances for a tenant of a
/// ``GatewayDaemon``, and what the tests check them with.
struct ClientFixture {
    let gateway: GatewayDaemon
    let tenant: String?

    /// A daemon with a fresh tenant made from `tenantJSON` (`nil`: project users).
    ///
    /// The default tenant hashes with the cheapest scrypt the API accepts: these tests are about
    /// the client, and a parallel run starves the daemon's idle-priority hashing pool past the
    /// client's read timeout at the default cost.
    static func run(
        tenant tenantJSON: String? =
            #"{"displayName":"client","allowPasswordSignup":true,"enableAnonymousUser":true,"scryptParameters":{"logN":10,"r":1,"p":1}}"#,
        environment: [String: String] = [:], _ body: @Sendable (ClientFixture) async throws -> Void
    ) async throws {
        try await GatewayDaemon.run(environment: environment) { gateway in
            var tenant: String?
            if let tenantJSON { tenant = try await gateway.createTenant(tenantJSON) }
            try await body(ClientFixture(gateway: gateway, tenant: tenant))
        }
    }

    /// The configuration of an `Auth` for this fixture's tenant.
    func configuration(persistence: any AuthPersistence = InMemoryPersistence(), tenant: String?? = nil) -> AuthConfiguration {
        AuthConfiguration(
            baseURL: gateway.baseURL, apiKey: GatewayDaemon.apiKey, projectId: GatewayDaemon.projectId,
            tenantId: tenant ?? self.tenant, persistence: persistence)
    }

    /// A new `Auth` for this fixture's tenant.
    func auth(persistence: any AuthPersistence = InMemoryPersistence(), tenant: String?? = nil) -> Auth {
        Auth(configuration: configuration(persistence: persistence, tenant: tenant))
    }

    /// The admin API path of this tenant's users.
    var accounts: String {
        "/v1/projects/\(GatewayDaemon.projectId)\(tenant.map { "/tenants/\($0)" } ?? "")/accounts"
    }

    /// An admin update of a user (`accounts:update`), e.g. `"disableUser":true`.
    func adminUpdate(_ uid: String, _ fields: String) async throws {
        let answer = try await gateway.send("POST", "\(accounts):update", json: #"{"localId":"\#(uid)",\#(fields)}"#)
        guard answer.status == 200 else { throw TestSetupError("admin update: \(answer.status) \(answer.text)") }
    }
}

/// What an `AsyncStream<User?>` of an `Auth` delivered: `uid` or `nil` per event, in order.
final class EventRecorder: Sendable {
    private final class Events: Sendable {
        let list = Mutex<[String?]>([])
    }

    private let events = Events()
    private let task: Task<Void, Never>

    /// Starts recording `stream`.
    init(_ stream: AsyncStream<User?>) {
        let events = self.events
        task = Task {
            for await user in stream { events.list.withLock { $0.append(user?.uid) } }
        }
    }

    deinit { task.cancel() }

    /// The events so far.
    var recorded: [String?] { events.list.withLock { $0 } }

    /// Waits until `condition` holds of the events (or `timeout` passes); the events.
    @discardableResult
    func wait(within timeout: Duration = .seconds(10), until condition: ([String?]) -> Bool) async throws -> [String?] {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < timeout {
            let now = recorded
            if condition(now) { return now }
            try await Task.sleep(for: .milliseconds(20))
        }
        return recorded
    }
}

/// The error `operation` throws, as an ``AuthClientError`` (`nil` if it succeeds or
/// throws something else).
func clientError(_ operation: () async throws -> some Any) async -> AuthClientError? {
    do {
        _ = try await operation()
        return nil
    } catch {
        return error as? AuthClientError
    }
}
