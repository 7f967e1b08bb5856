import Foundation
import PortcullisCore
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@Suite("Reaching PostgreSQL")
struct DatabaseConnectionTests {
    @Test("database.tls require refuses a server without TLS, within seconds and naming it; disable connects")
    func tlsRequired() async throws {
        var settings = try await TestDatabase.create()
        settings.tlsMode = .require
        let started = ContinuousClock.now
        let error = await #expect(throws: DatabaseUnreachable.self) {
            try await Database(settings: settings, logger: TestDatabase.logger).probe()
        }
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(error?.description.contains("\(settings.host):\(settings.port)") == true)
        #expect(error?.description.contains("TLS") == true, "\(error?.description ?? "")")
        settings.tlsMode = .disable
        try await Database(settings: settings, logger: TestDatabase.logger).probe()
    }

    @Test("an unreachable server is reported with its address, never its password")
    func unreachable() async throws {
        var settings = try await TestDatabase.create()
        let server = settings.endpoints[0]
        settings.endpoints = [DatabaseSettings.Endpoint(host: server.host, port: 1)]  // nothing listens there
        settings.password = "s3cret-password"
        let error = await #expect(throws: DatabaseUnreachable.self) {
            try await Database(settings: settings, logger: TestDatabase.logger).probe()
        }
        #expect(error?.description.hasPrefix("cannot use PostgreSQL at \(server.host):1") == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("s3cret") == false)
        // Several servers: one of them answering is enough, and the others are named when none does.
        settings.endpoints = [DatabaseSettings.Endpoint(host: server.host, port: 1), server]
        try await Database(settings: settings, logger: TestDatabase.logger).probe()
        settings.endpoints = [DatabaseSettings.Endpoint(host: server.host, port: 1), DatabaseSettings.Endpoint(host: server.host, port: 2)]
        let none = await #expect(throws: DatabaseUnreachable.self) {
            try await Database(settings: settings, logger: TestDatabase.logger).probe()
        }
        #expect(
            none?.description.hasPrefix("no PostgreSQL server accepts writes: \(server.host):1: ") == true, "\(none?.description ?? "")")
        #expect(none?.description.contains("; \(server.host):2: ") == true, "\(none?.description ?? "")")
    }

    @Test(
        "two servers that both accept writes (a former primary back before its demotion): nothing is served until one is left"
    )
    func twoWritableServers() async throws {
        try await PrivatePostgreSQL.run { other in
            var settings = try TestDatabase.serverSettings
            let shared = settings.endpoints[0]
            // Both clusters have the maintenance database and the role.
            settings.endpoints = [other.endpoint, shared]
            settings.requestTimeout = .seconds(1)
            let database = Database(settings: settings, logger: TestDatabase.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await database.run() }
                // The first in the list would be libpq's pick; neither is taken while both take writes.
                for _ in 0..<2 { #expect(await !database.ping()) }
                try await other.stop()
                #expect(try await database.pool().endpoint == shared)
                #expect(await database.ping())
                group.cancelAll()
            }
        }
    }

    @Test("the pool's connections plan generically and never JIT-compile: the session settings every query relies on")
    func sessionSettings() async throws {
        let database = Database(settings: try await TestDatabase.create(), logger: TestDatabase.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.run() }
            defer { group.cancelAll() }
            let settings = try await database.withConnection { connection in
                var values: [String] = []
                let rows = try await connection.query(
                    "SELECT current_setting('plan_cache_mode'), current_setting('jit')", logger: TestDatabase.logger)
                for try await (plans, jit) in rows.decode((String, String).self) { values = [plans, jit] }
                return values
            }
            #expect(settings == ["force_generic_plan", "off"])
        }
    }

    @Test("a connection closed right after checkout: every call still answers within request_timeout, and the pool recovers")
    func closedAfterCheckout() async throws {
        var settings = try await TestDatabase.create()
        settings.maximumConnections = 2
        settings.requestTimeout = .seconds(1)
        let database = Database(settings: settings, logger: TestDatabase.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.run() }
            defer { group.cancelAll() }
            #expect(await database.ping())
            for _ in 0..<4 {
                let started = ContinuousClock.now
                // What a server restart does to a connection the pool just handed out: the
                // query that follows is written to a closed channel.
                await #expect(throws: AuthError.self) {
                    try await database.withConnection { connection in
                        try await connection.close()
                        var rows = 0
                        for try await _ in try await connection.query("SELECT 1", logger: TestDatabase.logger) { rows += 1 }
                        return rows
                    }
                }
                #expect(ContinuousClock.now - started < .seconds(2))
            }
            // The deadline of a call that hangs in the driver: answered, and its connection given up.
            let started = ContinuousClock.now
            let error = await #expect(throws: AuthError.self) {
                try await database.withConnection { connection in
                    try await connection.query("SELECT pg_sleep(30)", logger: TestDatabase.logger)
                }
            }
            #expect(error?.code == .unavailable)
            #expect(ContinuousClock.now - started < .seconds(2))
            let recovered = try await eventually { await database.ping() }
            #expect(recovered != nil)
        }
    }

    @Test("TLS modes from database.tls and from a URL's sslmode; loopback defaults to disable, other hosts to prefer")
    func tlsModes() throws {
        #expect(DatabaseSettings(url: "postgres://u@db.example.com/app")?.effectiveTLSMode == .prefer)
        #expect(DatabaseSettings(url: "postgres://u@127.0.0.1/app")?.effectiveTLSMode == .disable)
        #expect(DatabaseSettings(url: "postgres://u@db.example.com/app?sslmode=require")?.effectiveTLSMode == .require)
        #expect(DatabaseSettings(url: "postgres://u@db.example.com/app?sslmode=verify-full")?.effectiveTLSMode == .require)
        #expect(DatabaseSettings(url: "postgres://u@127.0.0.1/app?sslmode=prefer")?.effectiveTLSMode == .prefer)
        #expect(DatabaseSettings(url: "postgres://u@db.example.com/app?sslmode=sometimes") == nil)
        #expect(DatabaseSettings.TLSMode(setting: "REQUIRE") == .require)
        #expect(DatabaseSettings.TLSMode(setting: "yes") == nil)
    }

    @Test("several hosts as libpq takes them: each with its port or 5432, IPv6 in brackets, in order; malformed lists refused")
    func severalHosts() throws {
        let settings = try #require(
            DatabaseSettings(
                url: "postgresql://app:p%40ss@db1:5433,db2,[fd00::2]:6432/auth?target_session_attrs=read-write&sslmode=require"))
        #expect(settings.endpoints.map(\.description) == ["db1:5433", "db2:5432", "[fd00::2]:6432"])
        #expect(settings.user == "app" && settings.password == "p@ss" && settings.database == "auth")
        #expect(settings.effectiveTLSMode == .require)
        #expect(DatabaseSettings(url: "postgres://u@127.0.0.1:5432,localhost:5433/app")?.effectiveTLSMode == .disable)
        #expect(DatabaseSettings(url: "postgres://u@127.0.0.1,db.example.com/app")?.effectiveTLSMode == .prefer)
        #expect(DatabaseSettings(url: "postgres://u@h1,h2/app?target_session_attrs=primary")?.endpoints.count == 2)
        for refused in [
            "postgres://u@h1,,h2/app", "postgres://u@h1:0/app", "postgres://u@h1:x/app", "postgres://u@[fd00::2/app",
            "postgres://u@h1,h2/app?target_session_attrs=read-only", "postgres://h1/app", "mysql://u@h1/app",
        ] {
            #expect(DatabaseSettings(url: refused) == nil, "\(refused)")
        }
    }
}

@Suite("Guarded caches")
struct GuardedCacheTests {
    /// A load that waits until the test lets it finish.
    actor Gate {
        private var waiting: CheckedContinuation<Void, Never>?
        private var opened = false
        private var started: CheckedContinuation<Void, Never>?
        private var hasStarted = false

        func pass() async {
            hasStarted = true
            started?.resume()
            if opened { return }
            await withCheckedContinuation { waiting = $0 }
        }

        func untilStarted() async {
            if hasStarted { return }
            await withCheckedContinuation { started = $0 }
        }

        func open() {
            opened = true
            waiting?.resume()
        }
    }

    @Test("a load in flight when an invalidation lands is returned but not stored")
    func invalidationWinsOverLoadInFlight() async throws {
        let cache = GuardedCache<String, Int>(limit: 10)
        let gate = Gate()
        async let stale = cache.value(for: "k") {
            await gate.pass()
            return 1  // read before the change the invalidation announces
        }
        await gate.untilStarted()
        cache.invalidate("k")
        await gate.open()
        #expect(try await stale == 1)
        #expect(cache.cached("k") == nil)
        // The next read loads again, and its value is kept.
        #expect(try await cache.value(for: "k") { 2 } == 2)
        #expect(cache.cached("k") == 2)
        #expect(try await cache.value(for: "k") { 3 } == 2)
        cache.invalidate { $0 == "k" }
        #expect(cache.cached("k") == nil)
    }

    @Test("an invalidation of another key leaves a load in flight to be stored; a wider one does not")
    func otherKeysInvalidationSparesLoad() async throws {
        let cache = GuardedCache<String, Int>(limit: 10)
        for wide in [false, true] {
            cache.invalidateAll()
            let gate = Gate()
            async let loaded = cache.value(for: "k") {
                await gate.pass()
                return 1
            }
            await gate.untilStarted()
            if wide { cache.invalidate { $0 == "other" } } else { cache.invalidate("other") }
            await gate.open()
            #expect(try await loaded == 1)
            #expect(cache.cached("k") == (wide ? nil : 1), "wide: \(wide)")
        }
    }

    @Test("a flush keeping last known serves it only to a load that fails UNAVAILABLE, and never after a change to its key")
    func lastKnownThroughAnOutage() async throws {
        let cache = GuardedCache<String, Int>(limit: 10)
        let down: @Sendable () async throws -> Int = { throw AuthError(.unavailable) }
        _ = try await cache.value(for: "a") { 1 }
        _ = try await cache.value(for: "b") { 2 }
        cache.invalidateAll(keepingLastKnown: true)
        #expect(cache.cached("a") == nil)
        #expect(try await cache.value(for: "a", load: down) == 1)
        // Reachable again: a load wins over the last known value, which is then gone.
        #expect(try await cache.value(for: "a") { 10 } == 10)
        cache.invalidate("a")
        await #expect(throws: AuthError(.unavailable)) { try await cache.value(for: "a", load: down) }
        // Another error than UNAVAILABLE is the caller's, last known or not.
        await #expect(throws: AuthError(.internalError)) {
            try await cache.value(for: "b") { throw AuthError(.internalError) }
        }
        // A change to the key drops what was known of it.
        cache.invalidate("b")
        await #expect(throws: AuthError(.unavailable)) { try await cache.value(for: "b", load: down) }
        // A plain flush keeps nothing.
        _ = try await cache.value(for: "c") { 3 }
        cache.invalidateAll()
        await #expect(throws: AuthError(.unavailable)) { try await cache.value(for: "c", load: down) }
    }
}

@Suite("Schema gate")
struct SchemaGateTests {
    @Test("waiters are released when the gate opens; later waiters pass at once; a cancelled waiter returns")
    func gate() async throws {
        let gate = SchemaGate()
        let released = Task {
            await gate.wait(); return gate.isOpen
        }
        let cancelled = Task {
            await gate.wait(); return Task.isCancelled
        }
        cancelled.cancel()
        #expect(await cancelled.value)
        #expect(!gate.isOpen)
        gate.open()
        #expect(await released.value)
        await gate.wait()
        gate.open()
        #expect(gate.isOpen)
    }
}
