import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import PostgresNIO
import Testing

/// Admin changes to an account's password, email and provider links.
extension AdminUserTests {

    @Test("update sets the password with the tenant's policy and email (EMAIL_EXISTS), both revoking sessions; unlinks and links providers")
    func updateCredentialsAndProviders() async throws {
        try await Self.forEachScope { gateway, tenant in
            let uid = try await gateway.createUser(#"{"email":"carol@example.com","password":"secret12"}"#, tenant: tenant)
            _ = try await gateway.createUser(#"{"email":"taken@example.com"}"#, tenant: tenant)
            func update(_ fields: String) async throws -> TestResponse {
                try await gateway.admin(":update", tenant: tenant, #"{"localId":"\#(uid)",\#(fields)}"#)
            }
            let session = try await gateway.signIn("carol@example.com", "secret12", tenant: tenant)

            try await update(#""password":"12345""#).expectEnvelope(.badRequest, "WEAK_PASSWORD")
            #expect(try await gateway.refresh(session.refreshToken).status == .ok, "a refused change revokes nothing")
            #expect(try await update(#""password":"new secret 1""#).status == .ok)
            #expect(try await gateway.refresh(session.refreshToken).errorMessage == "TOKEN_EXPIRED")
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "carol@example.com", "password": "secret12"], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_PASSWORD")
            let second = try await gateway.signIn("carol@example.com", "new secret 1", tenant: tenant)

            try await update(#""email":"TAKEN@example.com""#).expectEnvelope(.badRequest, "EMAIL_EXISTS")
            try await update(#""email":"not-an-email""#).expectEnvelope(.badRequest, "INVALID_EMAIL")
            #expect(try await update(#""emailVerified":true"#).status == .ok)
            #expect(try await update(#""email":"Carol2@example.com""#).status == .ok)
            var user = try #require(try await gateway.adminUser(uid, tenant: tenant))
            #expect(user.string(at: ["email"]) == "carol2@example.com")
            #expect(user.value(at: ["emailVerified"]) == .bool(false), "a new email is unverified")
            #expect(user.list(at: ["providerUserInfo"]).compactMap { $0.string(at: ["federatedId"]) } == ["carol2@example.com"])
            #expect(try await gateway.refresh(second.refreshToken).errorMessage == "TOKEN_EXPIRED")
            _ = try await gateway.signIn("carol2@example.com", "new secret 1", tenant: tenant)

            // Linking: FEDERATED_USER_ID_ALREADY_LINKED when another user holds the identity.
            let link = #""linkProviderUserInfo":{"providerId":"github.com","rawId":"gh-7","displayName":"Carol GH"}"#
            #expect(try await update(link).status == .ok)
            #expect(try await update(link).status == .ok, "linking it again to its own user is no error")
            let other = try await gateway.createUser("{}", tenant: tenant)
            try await gateway.admin(":update", tenant: tenant, #"{"localId":"\#(other)",\#(link)}"#)
                .expectEnvelope(.badRequest, "FEDERATED_USER_ID_ALREADY_LINKED")
            try await update(#""linkProviderUserInfo":{"providerId":"password","rawId":"x"}"#)
                .expectEnvelope(.badRequest, "INVALID_PROVIDER_ID")
            try await update(#""linkProviderUserInfo":{"providerId":"google.com"}"#).expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            user = try #require(try await gateway.adminUser(uid, tenant: tenant))
            #expect(
                user.list(at: ["providerUserInfo"]).compactMap { $0.string(at: ["providerId"]) }.sorted() == ["github.com", "password"])

            // An admin may remove any provider, the last one included; the SDKs' phone removal is harmless.
            #expect(try await update(#""deleteProvider":["password","phone"]"#).status == .ok)
            try await gateway.endUser(
                "accounts:signInWithPassword", ["email": "carol2@example.com", "password": "new secret 1"], tenant: tenant
            ).expectEnvelope(.badRequest, "INVALID_PASSWORD")
            #expect(try await update(#""deleteProvider":["github.com"]"#).status == .ok)
            user = try #require(try await gateway.adminUser(uid, tenant: tenant))
            #expect(user.list(at: ["providerUserInfo"]).isEmpty)
            #expect(user.string(at: ["email"]) == "carol2@example.com", "unlinking keeps the email")
            // The identity is free again: another user may have it.
            #expect(try await gateway.admin(":update", tenant: tenant, #"{"localId":"\#(other)",\#(link)}"#).status == .ok)
            let lookup = try await gateway.admin(
                ":lookup", tenant: tenant, #"{"federatedUserId":[{"providerId":"github.com","rawId":"gh-7"}]}"#
            ).json()
            #expect(lookup.list(at: ["users"]).compactMap { $0.string(at: ["localId"]) } == [other])
        }
    }
}
