import PortcullisCore
import PortcullisCrypto
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

@testable import PortcullisAuth

/// Administration writes that race: masked tenant and project-config updates,
/// admin keys against revocation and against their tenant's deletion, and a
/// tenant's deletion against sign-ups into it.
@Suite("Tenant and admin-key races")
struct TenantRaceTests {
    /// One change per maskable field, each with the settings it must leave behind.
    static let changes: [(mask: String, body: String, check: @Sendable (TenantSettings) -> Bool)] = [
        ("displayName", #"{"displayName":"renamed"}"#, { $0.displayName == "renamed" }),
        ("allowPasswordSignup", #"{"allowPasswordSignup":false}"#, { !$0.allowPasswordSignup }),
        ("enableEmailLinkSignin", #"{"enableEmailLinkSignin":true}"#, { $0.enableEmailLinkSignin }),
        ("enableAnonymousUser", #"{"enableAnonymousUser":true}"#, { $0.enableAnonymousUser }),
        (
            "client.permissions.disabledUserSignup", #"{"client":{"permissions":{"disabledUserSignup":true}}}"#,
            { $0.permissions.disabledUserSignup }
        ),
        (
            "client.permissions.disabledUserDeletion", #"{"client":{"permissions":{"disabledUserDeletion":true}}}"#,
            { $0.permissions.disabledUserDeletion }
        ),
        (
            "emailPrivacyConfig.enableImprovedEmailPrivacy", #"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":true}}"#,
            { $0.enableImprovedEmailPrivacy }
        ),
        ("signingAlgorithm", #"{"signingAlgorithm":"EdDSA"}"#, { $0.signingAlgorithm == .edDSA }),
        ("idTokenLifetimeSeconds", #"{"idTokenLifetimeSeconds":900}"#, { $0.idTokenLifetimeSeconds == 900 }),
        ("recentLoginWindowSeconds", #"{"recentLoginWindowSeconds":120}"#, { $0.recentLoginWindowSeconds == 120 }),
        ("refreshTokenReuseGraceSeconds", #"{"refreshTokenReuseGraceSeconds":0}"#, { $0.refreshTokenReuseGraceSeconds == 0 }),
        ("oobCodeLifetimeSeconds", #"{"oobCodeLifetimeSeconds":600}"#, { $0.oobCodeLifetimeSeconds == 600 }),
    ]

    @Test("12 tenant updates with disjoint masks at once: every change persists, each gets its own version, the cache holds the last")
    func tenantMasks() async throws {
        try await AuthHarness.run { harness in
            let tenant = try await harness.createTenant()
            let outcomes = try await race(Self.changes.count) { index in
                let change = Self.changes[index]
                return try await harness.tenantAdmin.update(
                    id: tenant, body: try json(change.body), updateMask: change.mask, scope: .project, actor: "racer \(index)"
                ).version
            }
            #expect(outcomes.codes().isEmpty)
            #expect(Set(outcomes.successes()) == Set(2...Int64(1 + Self.changes.count)))
            let stored = try await harness.tenantAdmin.get(id: tenant)
            #expect(stored.version == Int64(1 + Self.changes.count))
            for change in Self.changes { #expect(change.check(stored.settings), "\(change.mask)") }
            // This instance's cache kept the newest of its own writes, whatever order they came back in.
            #expect(try await harness.tenantCache.tenant(id: tenant) == stored)
            let audited = try await harness.count(
                "SELECT count(*) FROM audit_log WHERE tenant_id = \(tenant) AND action = 'tenant.update'")
            #expect(audited == Int64(Self.changes.count))
        }
    }

    @Test("8 project-config updates with disjoint masks before the config was ever stored: all persist, versions 1 to 8")
    func projectConfigMasks() async throws {
        try await AuthHarness.run { harness in
            let changes = Array(Self.changes.prefix(8))
            let outcomes = try await race(changes.count) { index in
                let change = changes[index]
                return try await harness.tenantAdmin.updateProjectConfig(
                    body: try json(change.body), updateMask: change.mask, actor: "racer \(index)"
                ).version
            }
            #expect(outcomes.codes().isEmpty)
            #expect(Set(outcomes.successes()) == Set(1...Int64(changes.count)))
            let stored = try await harness.tenantAdmin.projectConfig()
            #expect(stored.version == Int64(changes.count))
            for change in changes { #expect(change.check(stored.settings), "\(change.mask)") }
            #expect(try await harness.tenantCache.project() == stored)
        }
    }

    @Test("20 revocations of one admin key at once: exactly one revokes it, 19 get ADMIN_KEY_NOT_FOUND, one audit entry")
    func revocations() async throws {
        try await AuthHarness.run { harness in
            let (key, secret) = try await harness.adminKeys.create(displayName: "leaked", scope: .project, actor: "test")
            let outcomes = try await race(20) { index in try await harness.adminKeys.revoke(keyId: key.keyId, actor: "racer \(index)") }
            #expect(outcomes.successes().count == 1)
            #expect(outcomes.codes() == [.adminKeyNotFound: 19])
            #expect(try await AdminServiceTests.principal(harness, secret: secret) == nil)
            let target = "adminKeys/\(key.keyId)"
            #expect(try await harness.count("SELECT count(*) FROM audit_log WHERE action = 'adminKey.revoke' AND target = \(target)") == 1)
        }
    }
}
