import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

@Suite("Input limits")
struct InputLimitTests {
    @Test("scryptParameters are bounded by work, not only memory: N·r·p at most 16 × the default's")
    func scryptWorkBound() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"kdf","allowPasswordSignup":true}"#)
            // 64 MiB (within the memory bound) but 64 × the default's work.
            let heavy = try await gateway.send(
                .patch, "\(gateway.tenants)/\(tenant)?updateMask=scryptParameters",
                json: #"{"scryptParameters":{"logN":14,"r":32,"p":16}}"#)
            heavy.expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await gateway.send(.post, gateway.tenants, json: #"{"displayName":"x","scryptParameters":{"logN":15,"r":8,"p":16}}"#)
                .expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            // Exactly 16 × the default's work is allowed.
            try await gateway.patchTenant(tenant, mask: "scryptParameters", #"{"scryptParameters":{"logN":14,"r":16,"p":8}}"#)
        }
    }

    @Test("displayName and photoUrl are bounded, so a profile cannot make ID tokens unverifiably large")
    func profileFieldLimits() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"lim","allowPasswordSignup":true}"#)
            let long = String(repeating: "n", count: 100_000)
            try await gateway.endUser(
                "accounts:signUp", ["email": "l@example.com", "password": "correct horse", "displayName": .string(long)], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            let session = try await gateway.signUp("l@example.com", tenant: tenant)
            try await gateway.endUser(
                "accounts:update", ["idToken": .string(session.idToken), "displayName": .string(long)], tenant: tenant
            )
            .expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await gateway.endUser(
                "accounts:update", ["idToken": .string(session.idToken), "photoUrl": .string("https://example.com/" + long)], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            let fine = try await gateway.endUser(
                "accounts:update",
                [
                    "idToken": .string(session.idToken), "displayName": .string(String(repeating: "é", count: 256)),
                    "photoUrl": "https://example.com/a.png",
                ], tenant: tenant)
            #expect(fine.status == .ok, "\(String(buffer: fine.body))")
        }
    }
}
