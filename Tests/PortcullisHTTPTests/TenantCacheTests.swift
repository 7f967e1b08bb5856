import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

/// Tenant state held within `cache.tenant_bytes`: loaded on first use, the least recently
/// used evicted, reloaded right.
@Suite("Tenant state in memory")
struct TenantCacheTests {
    /// A budget whose shares hold a handful of tenants: settings about 1.6 KB, an ES256
    /// keyring about 2.5 KB (`TenantSettingsCache.cost(of:)`, `Keyring.estimatedBytes`).
    static let smallBudget = TenantCacheBudget(bytes: 32 << 10)

    static func passwordTenant(_ gateway: TestGateway) async throws -> String {
        try await gateway.createTenant(#"{"displayName":"c","allowPasswordSignup":true,"signingAlgorithm":"ES256"}"#)
    }

    /// A sign-up, then a sign-in: the sign-up's keyring load, which makes the tenant's first
    /// key, is not kept (the key's own invalidation lands while it runs); the sign-in's is.
    static func use(_ gateway: TestGateway, tenant: String, as email: String) async throws {
        _ = try await gateway.signUp(email, tenant: tenant)
        _ = try await gateway.signIn(email, tenant: tenant)
    }

    /// A `/metrics` sample's value, e.g. `portcullis_cache_evictions_total` of `cache`.
    static func metric(_ gateway: TestGateway, _ name: String, cache: String) async throws -> Double? {
        let text = String(buffer: try await gateway.send(.get, "/metrics").body)
        let prefix = "\(name){cache=\"\(cache)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    @Test("past the budget the least recently used tenants are evicted, a tenant in use stays, and /metrics counts it all")
    func evictsLeastRecentlyUsed() async throws {
        try await TestGateway.run(configure: { $0.tenantCache = Self.smallBudget }) { gateway in
            let services = gateway.server.services
            let hot = try await Self.passwordTenant(gateway)
            try await Self.use(gateway, tenant: hot, as: "hot@example.com")
            var others: [String] = []
            for index in 0..<12 {
                let tenant = try await Self.passwordTenant(gateway)
                try await Self.use(gateway, tenant: tenant, as: "u\(index)@example.com")
                others.append(tenant)
                // Used between every other tenant's requests: never the least recently used.
                _ = try await gateway.signIn("hot@example.com", tenant: hot)
            }
            #expect(services.tenantSettings.cached(id: hot) != nil)
            #expect(services.keyrings.cached(tenant: TenantScope(hot)) != nil)
            #expect(services.tenantSettings.cached(id: others[0]) == nil, "the oldest tenant's settings stayed")
            #expect(services.keyrings.cached(tenant: TenantScope(others[0])) == nil, "the oldest tenant's keyring stayed")
            #expect(services.tenantSettings.cached(id: others[11]) != nil)

            for cache in ["tenant_settings", "keyrings"] {
                let evictions = try await Self.metric(gateway, "portcullis_cache_evictions_total", cache: cache)
                #expect((evictions ?? 0) > 0, "\(cache): no eviction recorded")
                #expect((try await Self.metric(gateway, "portcullis_cache_hits_total", cache: cache) ?? 0) > 0)
            }
            // Each tenant was loaded once (its keyring twice, see `use`), the tenant in use never again.
            #expect(try await Self.metric(gateway, "portcullis_cache_misses_total", cache: "tenant_settings") == 13)
            #expect(try await Self.metric(gateway, "portcullis_cache_misses_total", cache: "keyrings") == 26)
            let settingsCost = try await Self.metric(gateway, "portcullis_cache_cost", cache: "tenant_settings")
            #expect(settingsCost.map { $0 > 0 && Int($0) <= Self.smallBudget.settings } == true, "\(settingsCost ?? -1)")
            let keyringCost = try await Self.metric(gateway, "portcullis_cache_cost", cache: "keyrings")
            #expect(keyringCost.map { $0 > 0 && Int($0) <= Self.smallBudget.keyrings } == true, "\(keyringCost ?? -1)")

            // An evicted tenant simply reloads: its users sign in as before.
            let session = try await gateway.signIn("u0@example.com", tenant: others[0])
            #expect(try await gateway.endUser("accounts:lookup", ["idToken": .string(session.idToken)], tenant: others[0]).status == .ok)
        }
    }

    @Test("a tenant evicted on one instance while another changes its toggle and rotates its key reloads both right")
    func evictedTenantReloadsChanges() async throws {
        let settings = try await TestDatabase.create()
        let small = try TestGateway.make(settings: settings) { $0.tenantCache = Self.smallBudget }
        let other = try TestGateway.make(settings: settings)
        try await small.application.test(.router) { smallClient in
            try await other.application.test(.router) { otherClient in
                let key = try await small.services.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                try await Self.reloadsChanges(
                    small: TestGateway(server: small, client: smallClient, projectKey: key),
                    other: TestGateway(server: other, client: otherClient, projectKey: key))
            }
        }
    }

    /// The body of ``evictedTenantReloadsChanges()``, on two instances of one database.
    private static func reloadsChanges(small a: TestGateway, other b: TestGateway) async throws {
        let cache = a.server.services.tenantSettings
        let keyrings = a.server.services.keyrings
        let tenant = try await Self.passwordTenant(a)
        _ = try await a.signUp("first@example.com", tenant: tenant)
        let before = try await a.signIn("first@example.com", tenant: tenant)
        let oldKid = try KeyRotationTests.kid(before.idToken)
        #expect(cache.cached(id: tenant) != nil)
        #expect(keyrings.cached(tenant: TenantScope(tenant)) != nil)

        // Twelve other tenants push it out of the small instance's caches.
        for index in 0..<12 {
            try await Self.use(a, tenant: try await Self.passwordTenant(a), as: "u\(index)@example.com")
        }
        #expect(cache.cached(id: tenant) == nil)
        #expect(keyrings.cached(tenant: TenantScope(tenant)) == nil)

        // Meanwhile the other instance turns sign-up off and rotates the key: the small
        // instance holds nothing for the tenant that a NOTIFY could drop.
        let patched = try await b.send(
            .patch, "\(b.tenants)/\(tenant)?updateMask=client.permissions",
            json: #"{"client":{"permissions":{"disabledUserSignup":true}}}"#)
        #expect(patched.status == .ok)
        let rotated = try await b.send(.post, "\(b.tenants)/\(tenant)/keys:rotate").json()
        guard case .string(let newKid)? = rotated.value(at: ["kid"]) else { throw TestSetupError("no kid") }
        #expect(newKid != oldKid)

        // The next request reloads: the toggle holds, new tokens name the new key, and the
        // old token still verifies against the retired key, still published.
        try await a.endUser("accounts:signUp", ["email": "late@example.com", "password": "correct horse"], tenant: tenant)
            .expectEnvelope(.badRequest, "ADMIN_ONLY_OPERATION")
        let after = try await a.signIn("first@example.com", tenant: tenant)
        #expect(try KeyRotationTests.kid(after.idToken) == newKid)
        #expect(try await a.endUser("accounts:lookup", ["idToken": .string(before.idToken)], tenant: tenant).status == .ok)
        #expect(cache.cached(id: tenant)?.settings.permissions.disabledUserSignup == true)
    }
}
