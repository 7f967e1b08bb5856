import Foundation
import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("Tenant storage and cache")
struct TenantStoreTests {
    @Test("create, update, delete bump versions and write the audit log in the same transaction")
    func lifecycle() async throws {
        try await TestDatabase.withDatabase { database in
            let logger = TestDatabase.logger
            let tenants = TenantRepository(database: database, logger: logger)
            let audit = AuditLogRepository(database: database, logger: logger)
            var settings = TenantSettings()
            settings.displayName = "Robert'); DROP TABLE tenants;--"
            let tenant = try await tenants.create(settings: settings, actor: "test")
            #expect(tenant.version == 1)
            #expect(try await tenants.find(id: tenant.id)?.settings.displayName == settings.displayName)

            let updated = try await tenants.update(id: tenant.id, actor: "test") { current in
                var next = current
                next.permissions.disabledUserSignup = true
                return next
            }
            #expect(updated?.version == 2)
            #expect(try await tenants.find(id: tenant.id)?.settings.permissions.disabledUserSignup == true)

            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                _ = try await tenants.update(id: tenant.id, actor: "test") { _ in throw Refused() }
            }
            #expect(try await tenants.find(id: tenant.id)?.version == 2)
            #expect(try await tenants.update(id: "missing", actor: "test") { $0 } == nil)

            let events = try await audit.list(ofTenant: tenant.id, beforeId: nil, limit: 10)
            #expect(events.map(\.action) == ["tenant.update", "tenant.create"])
            #expect(events[0].before?.value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(false))
            #expect(events[0].after?.value(at: ["client", "permissions", "disabledUserSignup"]) == .bool(true))

            #expect(try await tenants.delete(id: tenant.id, actor: "test"))
            #expect(try await !tenants.delete(id: tenant.id, actor: "test"))
            #expect(try await tenants.find(id: tenant.id) == nil)
        }
    }

    @Test("a cache follows this instance's commits at once, with no listener; a rolled-back change leaves it serving")
    func cacheFollowsCommits() async throws {
        try await TestDatabase.withDatabase { database in
            let logger = TestDatabase.logger
            let tenants = TenantRepository(database: database, logger: logger)
            let cache = TenantSettingsCache(
                tenants: tenants, projectConfig: ProjectConfigRepository(database: database, projectId: "p", logger: logger))
            database.subscribers.add([cache])
            let tenant = try await tenants.create(settings: TenantSettings(), actor: "test")
            #expect(try await cache.settings(tenant: TenantScope(tenant.id)).permissions.disabledUserSignup == false)

            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                _ = try await tenants.update(id: tenant.id, actor: "test") { _ in throw Refused() }
            }
            _ = try await tenants.update(id: tenant.id, actor: "test") { current in
                var next = current
                next.permissions.disabledUserSignup = true
                return next
            }
            // The update's commit reached the cache before `update` returned.
            #expect(try await cache.settings(tenant: TenantScope(tenant.id)).permissions.disabledUserSignup == true)
            #expect(try await tenants.delete(id: tenant.id, actor: "test"))
            await #expect(throws: AuthError(.tenantNotFound)) { try await cache.settings(tenant: TenantScope(tenant.id)) }
        }
    }

    @Test("the cache serves from memory until NOTIFY invalidates it")
    func cacheInvalidation() async throws {
        try await TestDatabase.withDatabase { database in
            let logger = TestDatabase.logger
            let tenants = TenantRepository(database: database, logger: logger)
            let projectConfig = ProjectConfigRepository(database: database, projectId: "p", logger: logger)
            let cache = TenantSettingsCache(tenants: tenants, projectConfig: projectConfig)
            let tenant = try await tenants.create(settings: TenantSettings(), actor: "test")
            #expect(try await cache.settings(tenant: TenantScope(tenant.id)).permissions.disabledUserDeletion == false)

            // A write the cache is not told about stays invisible: it is really serving from memory.
            _ = try await tenants.update(id: tenant.id, actor: "test") { current in
                var next = current
                next.permissions.disabledUserDeletion = true
                return next
            }
            #expect(try await cache.settings(tenant: TenantScope(tenant.id)).permissions.disabledUserDeletion == false)

            cache.invalidate(.tenant(id: tenant.id, version: 2))
            #expect(try await cache.settings(tenant: TenantScope(tenant.id)).permissions.disabledUserDeletion == true)

            // Unknown tenants are TENANT_NOT_FOUND, also for ids that could never exist.
            for id in ["nope", "bad id'", ""] {
                let error = await #expect(throws: AuthError.self) { try await cache.settings(tenant: .tenant(id)) }
                #expect(error?.code == .tenantNotFound)
            }
            // Project users read the project config, defaults until set.
            #expect(try await cache.settings(tenant: .project) == TenantSettings())
        }
    }

    @Test("past its bytes the cache evicts the least recently used tenant; unknown ids, cached apart, evict none")
    func cacheBound() async throws {
        try await TestDatabase.withDatabase { database in
            let logger = TestDatabase.logger
            let tenants = TenantRepository(database: database, logger: logger)
            let first = try await tenants.create(settings: TenantSettings(), actor: "test")
            let second = try await tenants.create(settings: TenantSettings(), actor: "test")
            // Room for one tenant and a half.
            let limit = TenantSettingsCache.cost(of: first) * 3 / 2
            let cache = TenantSettingsCache(
                tenants: tenants, projectConfig: ProjectConfigRepository(database: database, projectId: "p", logger: logger),
                limit: limit)
            #expect(try await cache.tenant(id: first.id) == first)
            for index in 0..<200 { #expect(try await cache.tenant(id: "nobody-\(index)") == nil) }
            #expect(cache.cached(id: first.id) == first, "unknown tenant ids evicted a tenant")
            #expect(try await cache.tenant(id: second.id) == second)
            #expect(cache.cached(id: first.id) == nil)
            #expect(cache.cached(id: second.id) == second)
            // The evicted tenant reloads, as it is now.
            _ = try await tenants.update(id: first.id, actor: "test") {
                var next = $0
                next.enableAnonymousUser = true
                return next
            }
            #expect(try await cache.tenant(id: first.id)?.settings.enableAnonymousUser == true)
        }
    }

    @Test("the listener applies NOTIFY from another pool to this cache")
    func listener() async throws {
        try await TestDatabase.withDatabase { database in
            let logger = TestDatabase.logger
            let writer = Database(settings: database.settings, logger: logger)
            let tenants = TenantRepository(database: database, logger: logger)
            let cache = TenantSettingsCache(
                tenants: tenants, projectConfig: ProjectConfigRepository(database: database, projectId: "p", logger: logger))
            database.subscribers.add([cache])
            let listener = InvalidationListener(database: database, fullRefreshInterval: .seconds(3600), logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await writer.run() }
                group.addTask { try await listener.run() }
                defer { group.cancelAll() }
                let otherWriter = TenantRepository(database: writer, logger: logger)
                func enableAnonymous(_ id: String) async throws {
                    _ = try await otherWriter.update(id: id, actor: "test") {
                        var next = $0
                        next.enableAnonymousUser = true
                        return next
                    }
                }
                // Once a first change is seen, LISTEN is in place (its one start-up flush is behind us).
                let probe = try await tenants.create(settings: TenantSettings(), actor: "test")
                _ = try await cache.settings(tenant: TenantScope(probe.id))
                try await enableAnonymous(probe.id)
                #expect(try await eventually { try await cache.settings(tenant: TenantScope(probe.id)).enableAnonymousUser } != nil)

                let tenant = try await tenants.create(settings: TenantSettings(), actor: "test")
                #expect(try await cache.settings(tenant: TenantScope(tenant.id)).enableAnonymousUser == false)
                try await enableAnonymous(tenant.id)
                let delay = try await eventually { try await cache.settings(tenant: TenantScope(tenant.id)).enableAnonymousUser }
                #expect(delay != nil)
            }
        }
    }
}

@Suite("Signing key storage")
struct SigningKeyStoreTests {
    @Test("one newest key per tenant; activation retires the previous key and keeps it published; due tenants are found")
    func activation() async throws {
        try await TestDatabase.withDatabase { database in
            let keys = SigningKeyRepository(database: database, logger: TestDatabase.logger)
            func key(_ kid: String) -> StoredSigningKey {
                StoredSigningKey(
                    kid: kid, algorithm: "RS256", publicJWK: .object(["kid": .string(kid)]), sealedPrivateKey: [1, 2, 3],
                    createTime: Date(), retireTime: nil)
            }
            // Keys belong to an existing tenant: none is made for a tenant that is not (or no longer) there.
            await #expect(throws: Conflict.tenantMissing) {
                try await keys.activate(
                    tenant: .tenant("t"), key: key("k0"), activation: .first, publishRetiredSeconds: 60, actor: "test", at: Date())
            }
            #expect(try await keys.all(tenant: .tenant("t")).isEmpty)
            _ = try await database.withConnection { connection in
                try await connection.query("INSERT INTO tenants (tenant_id, settings) VALUES ('t', '{}')", logger: TestDatabase.logger)
            }
            #expect(
                try await keys.activate(
                    tenant: .tenant("t"), key: key("k1"), activation: .first, publishRetiredSeconds: 60, actor: "test", at: Date()))
            // A first key replaces nothing: it signs at any time, even for a clock behind the one that made it.
            let behind = Date().addingTimeInterval(-60)
            #expect(try await keys.published(tenant: .tenant("t"), at: behind).map { $0.state(at: behind) } == [.active])
            #expect(
                try await !keys.activate(
                    tenant: .tenant("t"), key: key("k2"), activation: .first, publishRetiredSeconds: 60, actor: "test", at: Date()))
            #expect(
                try await keys.activate(
                    tenant: .tenant("t"), key: key("k3"), activation: .immediately, publishRetiredSeconds: 60, actor: "test", at: Date()))
            let published = try await keys.published(tenant: .tenant("t"), at: Date())
            #expect(published.map(\.kid) == ["k1", "k3"])
            #expect(published.map { $0.state(at: Date()) } == [.retired, .active])
            #expect(published[0].sealedPrivateKey == [1, 2, 3])
            // A retired key with no publication window left is no longer published.
            _ = try await keys.activate(
                tenant: .tenant("t"), key: key("k4"), activation: .immediately, publishRetiredSeconds: 0, actor: "test", at: Date())
            #expect(try await keys.published(tenant: .tenant("t"), at: Date()).map(\.kid) == ["k1", "k4"])
            #expect(try await keys.all(tenant: .tenant("t")).count == 3)
            // Project users have their own keys.
            #expect(try await keys.published(tenant: .project, at: Date()).isEmpty)
            #expect(try await keys.tenantsDueForRotation(maximumAge: 3600, at: Date()).isEmpty)
            // Times are the caller's: an hour later, the key is due.
            #expect(try await keys.tenantsDueForRotation(maximumAge: 3600, at: Date().addingTimeInterval(3601)) == ["t"])

            // A scheduled rotation publishes the next key now, to sign after the lead; meanwhile
            // the key it replaces still signs, and the tenant is no longer due.
            #expect(
                try await !keys.activate(
                    tenant: .tenant("t"), key: key("k5"), activation: .scheduled(leadSeconds: 600, dueAfterSeconds: 3600),
                    publishRetiredSeconds: 60, actor: "test", at: Date()))
            #expect(
                try await keys.activate(
                    tenant: .tenant("t"), key: key("k5"), activation: .scheduled(leadSeconds: 600, dueAfterSeconds: 0),
                    publishRetiredSeconds: 60, actor: "test", at: Date().addingTimeInterval(1)))
            let scheduled = try await keys.published(tenant: .tenant("t"), at: Date())
            #expect(scheduled.map(\.kid) == ["k1", "k4", "k5"])
            #expect(scheduled.map { $0.state(at: Date()) } == [.retired, .active, .pending])
            #expect(scheduled.map { $0.state(at: Date().addingTimeInterval(603)) } == [.retired, .retired, .active])
            #expect(try await keys.tenantsDueForRotation(maximumAge: 1, at: Date().addingTimeInterval(2)).isEmpty)
            #expect(
                try await !keys.activate(
                    tenant: .tenant("t"), key: key("k6"), activation: .scheduled(leadSeconds: 600, dueAfterSeconds: 0),
                    publishRetiredSeconds: 60, actor: "test", at: Date()))
            // An immediate rotation (a leak) replaces both the signing and the pending key at once.
            _ = try await keys.activate(
                tenant: .tenant("t"), key: key("k7"), activation: .immediately, publishRetiredSeconds: 60, actor: "test", at: Date())
            let leaked = try await keys.published(tenant: .tenant("t"), at: Date())
            #expect(leaked.filter { $0.state(at: Date()) == .active }.map(\.kid) == ["k7"])
            #expect(!leaked.contains { $0.state(at: Date()) == .pending })
            #expect(!leaked.map(\.kid).contains("k5"))
        }
    }
}
