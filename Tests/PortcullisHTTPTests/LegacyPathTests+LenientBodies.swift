import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// Token bodies in camelCase, and `null` read as absent.
extension LegacyPathTests {
    @Test("POST /v1/token accepts camelCase JSON, at the root and under securetoken.googleapis.com")
    func camelCaseToken() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"tok","allowPasswordSignup":true}"#)
            var refreshToken = try await gateway.signUp("tok@example.com", tenant: tenant).refreshToken
            for path in ["/v1/token", "/securetoken.googleapis.com/v1/token"] {
                let response = try await gateway.token(
                    ["grantType": "refresh_token", "refreshToken": .string(refreshToken)], path: path)
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                guard case .string(let next)? = try response.json().value(at: ["refresh_token"]) else {
                    Issue.record("no refresh_token: \(String(buffer: response.body))")
                    return
                }
                #expect(try response.json().value(at: ["token_type"]) == "Bearer")
                refreshToken = next
            }
            try await gateway.token(["grantType": "authorization_code", "refreshToken": .string(refreshToken)])
                .expectEnvelope(.badRequest, "INVALID_GRANT_TYPE")
            try await gateway.token(["grantType": "refresh_token"]).expectEnvelope(.badRequest, "MISSING_REFRESH_TOKEN")
        }
    }

    @Test("null means absent: signUp, signInWithPassword, update, sendOobCode and token with null for unset fields")
    func nulls() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"nulls","allowPasswordSignup":true}"#)
            let signUp = try await gateway.endUser(
                "accounts:signUp",
                [
                    "email": "null@example.com", "password": "correct horse", "displayName": .null, "photoUrl": .null,
                    "idToken": .null, "captchaResponse": .null, "returnSecureToken": .null,
                ], tenant: tenant)
            #expect(signUp.status == .ok, "\(String(buffer: signUp.body))")
            #expect(try signUp.json().value(at: ["displayName"]) == nil)
            let created = try Session(signUp.json())
            #expect(created.claims.value(at: ["firebase", "sign_in_provider"]) == "password")

            let signIn = try await gateway.endUser(
                "accounts:signInWithPassword",
                ["email": "null@example.com", "password": "correct horse", "captchaResponse": .null, "returnSecureToken": .null],
                tenant: tenant)
            #expect(signIn.status == .ok, "\(String(buffer: signIn.body))")
            let session = try Session(signIn.json())

            // Only displayName is set; a null oobCode must not turn this into applying a code,
            // nor a null password or email into a change.
            let update = try await gateway.endUser(
                "accounts:update",
                [
                    "idToken": .string(session.idToken), "displayName": "Nully", "email": .null, "password": .null,
                    "photoUrl": .null, "deleteAttribute": .null, "deleteProvider": .null, "oobCode": .null,
                    "returnSecureToken": .null,
                ], tenant: tenant)
            #expect(update.status == .ok, "\(String(buffer: update.body))")
            #expect(try update.json().value(at: ["localId"]) == .string(session.uid))
            #expect(try update.json().value(at: ["displayName"]) == "Nully")
            #expect(try update.json().value(at: ["email"]) == "null@example.com")
            _ = try await gateway.signIn("null@example.com", tenant: tenant)

            let send: [String: JSONValue] = [
                "requestType": "PASSWORD_RESET", "idToken": .null, "newEmail": .null, "continueUrl": .null,
                "returnOobLink": .null,
            ]
            try await gateway.endUser("accounts:sendOobCode", send.merging(["email": "nobody@example.com"]) { $1 }, tenant: tenant)
                .expectEnvelope(.badRequest, "EMAIL_NOT_FOUND")
            try await gateway.endUser("accounts:sendOobCode", send.merging(["email": "null@example.com"]) { $1 }, tenant: tenant)
                .expectEnvelope(.badRequest, "OPERATION_NOT_ALLOWED")
            try await gateway.endUser("accounts:sendOobCode", send.merging(["email": .null]) { $1 }, tenant: tenant)
                .expectEnvelope(.badRequest, "MISSING_EMAIL")

            // A null under one spelling hides nothing sent under the other.
            let refreshed = try await gateway.token([
                "grant_type": .null, "grantType": "refresh_token", "refresh_token": .null,
                "refreshToken": .string(session.refreshToken),
            ])
            #expect(refreshed.status == .ok, "\(String(buffer: refreshed.body))")
            try await gateway.token(["grant_type": "refresh_token", "refresh_token": .null])
                .expectEnvelope(.badRequest, "MISSING_REFRESH_TOKEN")
        }
    }
}
