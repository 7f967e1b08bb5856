import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisStore
import PortcullisTestSupport
import Testing

@Suite("Several instances on one database")
struct MultiInstanceTests {
    @Test("a toggle PATCHed on instance A reaches instance B's cache by NOTIFY, not by its hourly refresh")
    func togglePropagates() async throws {
        let settings = try await TestDatabase.create()
        let a = try TestGateway.make(settings: settings)
        let b = try TestGateway.make(settings: settings)
        try await a.application.test(.router) { clientA in
            try await b.application.test(.router) { _ in
                let key = try await a.services.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                let gatewayA = TestGateway(server: a, client: clientA, projectKey: key)
                let probe = try await gatewayA.createTenant()
                let tenant = try await gatewayA.createTenant()
                func patch(_ id: String) async throws {
                    let response = try await gatewayA.send(
                        .patch, "\(gatewayA.tenants)/\(id)?updateMask=client.permissions",
                        json: #"{"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}"#)
                    #expect(response.status == .ok)
                }
                // B's listener flushes once when LISTEN starts; a first change seen through it proves LISTEN is up,
                // and B's periodic refresh is an hour away, so what follows can only travel by NOTIFY.
                _ = try await b.services.tenantSettings.settings(tenant: TenantScope(probe))
                try await patch(probe)
                #expect(
                    try await eventually {
                        try await b.services.tenantSettings.settings(tenant: TenantScope(probe)).permissions.disabledUserSignup
                    }
                        != nil)

                let before = try await b.services.tenantSettings.settings(tenant: TenantScope(tenant))
                #expect(!before.permissions.disabledUserSignup)
                try await patch(tenant)
                // A applies its own change to its very next request.
                #expect(try await a.services.tenantSettings.settings(tenant: TenantScope(tenant)).permissions.disabledUserSignup)
                // How fast is scripts/bench's question (DESIGN.md §7); a loaded test machine
                // only has to show that the change arrives.
                let delay = try await eventually(within: .seconds(30)) {
                    let seen = try await b.services.tenantSettings.settings(tenant: TenantScope(tenant))
                    return seen.permissions.disabledUserSignup && seen.permissions.disabledUserDeletion
                }
                #expect(delay != nil, "B never saw the toggle")
            }
        }
    }
}
