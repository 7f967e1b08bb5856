import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

/// Custom-token users that are not guests, disabled users and tenants, and deleted service accounts (on this instance and another).
extension CustomTokenTests {
    @Test("a custom-token user is no guest: its ID token cannot add a password without a recent sign-in, nor upgrade it")
    func notAnonymous() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            _ = try await gateway.send(
                .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=allowPasswordSignup",
                json: #"{"allowPasswordSignup":true}"#)
            let signer = try await TestSigner.create(gateway)
            let answer = try Answer(try await Self.signIn(gateway, try signer.mint(uid: "bare")))
            try await gateway.endUser(
                "accounts:signUp", ["idToken": .string(answer.idToken), "email": "bare@example.com", "password": "secret12"]
            ).expectEnvelope(.badRequest, "EMAIL_EXISTS")
            clock.advance(seconds: 301)
            try await gateway.endUser("accounts:update", ["idToken": .string(answer.idToken), "password": "secret12"])
                .expectEnvelope(.badRequest, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        }
    }

    @Test("a disabled user is refused; a disabled tenant is PROJECT_DISABLED; a deleted account's tokens are refused at once")
    func refusals() async throws {
        try await TestGateway.run { gateway in
            let signer = try await TestSigner.create(gateway)
            _ = try Answer(try await Self.signIn(gateway, try signer.mint(uid: "gone")))
            let disable = try await gateway.send(
                .post, "/v1/projects/\(TestGateway.projectId)/accounts:update", json: #"{"localId":"gone","disableUser":true}"#)
            #expect(disable.status == .ok)
            try await Self.signIn(gateway, try signer.mint(uid: "gone")).expectEnvelope(.badRequest, "USER_DISABLED")

            let tenant = try await gateway.createTenant(#"{"displayName":"off","disableAuth":true}"#)
            try await Self.signIn(gateway, try signer.mint(uid: "x", ["tenant_id": .string(tenant)]), tenant: tenant)
                .expectEnvelope(.badRequest, "PROJECT_DISABLED")

            let token = try signer.mint(uid: "fresh")
            _ = try Answer(try await Self.signIn(gateway, token))
            #expect(try await gateway.send(.delete, "\(ServiceAccountTests.path(nil))/\(signer.keyId)").status == .ok)
            try await Self.signIn(gateway, token).expectEnvelope(.badRequest, "INVALID_CUSTOM_TOKEN")
            try await Self.signIn(gateway, try signer.mint(uid: "fresh", kid: .some(nil))).expectEnvelope(
                .badRequest, "INVALID_CUSTOM_TOKEN")
        }
    }

    @Test("a service account deleted on instance A stops signing in on instance B, which had its key cached, by NOTIFY")
    func deletionReachesOtherInstances() async throws {
        let settings = try await TestDatabase.create()
        let a = try TestGateway.make(settings: settings)
        let b = try TestGateway.make(settings: settings)
        try await a.application.test(.router) { clientA in
            try await b.application.test(.router) { clientB in
                let key = try await a.services.adminKeys.create(displayName: "t", scope: .project, actor: "t").secret
                try await Self.deletion(
                    TestGateway(server: a, client: clientA, projectKey: key), TestGateway(server: b, client: clientB, projectKey: key))
            }
        }
    }

    private static func deletion(_ gatewayA: TestGateway, _ gatewayB: TestGateway) async throws {
        // A change seen through B's listener proves LISTEN is up; B's periodic flush is an hour
        // away, so what follows can only travel by NOTIFY.
        let probe = try await gatewayA.createTenant()
        let cacheB = gatewayB.server.services.tenantSettings
        _ = try await cacheB.settings(tenant: TenantScope(probe))
        try await gatewayA.patchTenant(probe, mask: "disableAuth", #"{"disableAuth":true}"#)
        #expect(try await eventually { try await cacheB.settings(tenant: TenantScope(probe)).disableAuth } != nil)

        let signer = try await TestSigner.create(gatewayA)
        let withKid = try signer.mint(uid: "b-user")
        let withoutKid = try signer.mint(uid: "b-user", kid: .some(nil))
        _ = try Answer(try await signIn(gatewayB, withKid))
        _ = try Answer(try await signIn(gatewayB, withoutKid))
        #expect(try await gatewayA.send(.delete, "\(ServiceAccountTests.path(nil))/\(signer.keyId)").status == .ok)
        let refused = try await eventually(within: .seconds(30)) { try await refuses(gatewayB, withKid) }
        #expect(refused != nil)
        try await signIn(gatewayB, withoutKid).expectEnvelope(.badRequest, "INVALID_CUSTOM_TOKEN")
    }

    static func refuses(_ gateway: TestGateway, _ token: String) async throws -> Bool {
        let response = try await signIn(gateway, token)
        return response.errorMessage?.hasPrefix("INVALID_CUSTOM_TOKEN") ?? false
    }
}
