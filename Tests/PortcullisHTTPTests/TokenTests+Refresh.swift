import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import PortcullisCore
import PortcullisJSON
import PortcullisStore
import PortcullisTestSupport
import Testing

@testable import PortcullisAuth
@testable import PortcullisCrypto
@testable import PortcullisHTTP

/// Refresh-token rotation, reuse, and the bodies `/v1/token` reads.
extension TokenTests {
    @Test("refresh rotates the token; a replay inside the grace window gets the same successor; reuse revokes the session")
    func refreshRotation() async throws {
        let clock = ManualClock()
        try await TestGateway.run(configure: { $0.clock = clock }) { gateway in
            let tenant = try await gateway.createTenant(
                #"{"displayName":"r","allowPasswordSignup":true,"refreshTokenReuseGraceSeconds":0}"#)
            let session = try await gateway.signUp("r@example.com", tenant: tenant)
            let first = try await gateway.refresh(session.refreshToken).json()
            guard case .string(let second)? = first.value(at: ["refresh_token"]), case .string(let idToken)? = first.value(at: ["id_token"])
            else {
                throw TestSetupError("no tokens")
            }
            #expect(second != session.refreshToken)
            #expect(first.value(at: ["access_token"]) == .string(idToken))
            #expect(first.value(at: ["user_id"]) == .string(session.uid))
            #expect(first.value(at: ["project_id"]) == .string(TestGateway.projectId))
            #expect(first.value(at: ["expires_in"]) == .string("3600"))
            let authTime = session.claims.value(at: ["auth_time"])
            let refreshedClaims = try JSONValue.parse(Base64URL.decode(String(idToken.split(separator: ".")[1])) ?? [])
            #expect(refreshedClaims.value(at: ["auth_time"]) == authTime)

            // Form-encoded, under the securetoken emulator prefix, as the Firebase SDKs send it.
            let form = try await gateway.client.execute(
                uri: "/securetoken.googleapis.com/v1/token?key=\(TestGateway.apiKey)", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "grant_type=refresh_token&refresh_token=\(second)"))
            #expect(form.status == .ok, "\(String(buffer: form.body))")
            guard case .string(let third)? = try form.json().value(at: ["refresh_token"]) else { throw TestSetupError("no token") }

            clock.advance(seconds: 1)
            // `second` was rotated a second ago with a 0 s grace window: reuse. The whole session dies.
            try await gateway.refresh(second).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh(third).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh("pr1.AA.garbage").expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh("").expectEnvelope(.badRequest, "MISSING_REFRESH_TOKEN")
            // A fresh sign-in starts a new family.
            let again = try await gateway.signIn("r@example.com", tenant: tenant)
            #expect(try await gateway.refresh(again.refreshToken).status == .ok)

            // Within a grace window a replay is allowed (a client retrying a lost answer, two tabs at
            // once) and gets the very same successor, so neither copy is left holding a dead token.
            try await gateway.patchTenant(tenant, mask: "refreshTokenReuseGraceSeconds", #"{"refreshTokenReuseGraceSeconds":30}"#)
            let graced = try await gateway.signIn("r@example.com", tenant: tenant)
            func successor(_ token: String) async throws -> String? {
                guard case .string(let next)? = try await gateway.refresh(token).json().value(at: ["refresh_token"]) else { return nil }
                return next
            }
            let next = try await successor(graced.refreshToken)
            #expect(next != nil)
            #expect(try await successor(graced.refreshToken) == next)
            // Once the successor itself rotates, the first token is two generations old: reuse, even inside
            // the window, and the session dies with every token it handed out.
            let latest = try await successor(next ?? "")
            #expect(latest != nil && latest != next)
            try await gateway.refresh(graced.refreshToken).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            try await gateway.refresh(latest ?? "").expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")

            // A well-formed token naming no session, or a real session with a made-up secret.
            let tenantPart = Base64URL.encode(Array(tenant.utf8))
            let made = "pr2.\(tenantPart).\(SecretToken.random(byteCount: 16)).\(SecretToken.random())"
            try await gateway.refresh(made).expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
            let victim = try await gateway.signIn("r@example.com", tenant: tenant)
            let sessionId = victim.refreshToken.split(separator: ".")[2]
            try await gateway.refresh("pr2.\(tenantPart).\(sessionId).\(SecretToken.random())")
                .expectEnvelope(.badRequest, "INVALID_REFRESH_TOKEN")
        }
    }

    @Test("refresh bodies: form-encoded with %XX escapes, or JSON, each in either spelling; a bad escape is INVALID_ARGUMENT")
    func refreshBodies() async throws {
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant(#"{"displayName":"f","allowPasswordSignup":true}"#)
            let session = try await gateway.signUp("f@example.com", tenant: tenant)
            func post(_ body: String, json: Bool = false) async throws -> TestResponse {
                try await gateway.client.execute(
                    uri: "/v1/token?key=\(TestGateway.apiKey)", method: .post,
                    headers: [.contentType: json ? "application/json" : "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: body))
            }
            let escaped = session.refreshToken.replacingOccurrences(of: ".", with: "%2E")
            let form = try await post("grant_type=refresh_token&refresh_token=\(escaped)")
            #expect(form.status == .ok, "\(String(buffer: form.body))")
            guard case .string(let next)? = try form.json().value(at: ["refresh_token"]) else { throw TestSetupError("no token") }
            let camel = try await post(#"{"grantType":"refresh_token","refreshToken":"\#(next)"}"#, json: true)
            #expect(camel.status == .ok, "\(String(buffer: camel.body))")
            guard case .string(let after)? = try camel.json().value(at: ["refresh_token"]) else { throw TestSetupError("no token") }
            // A form takes the camelCase spelling too: one lenient decoder for both bodies.
            let camelForm = try await post("grantType=refresh_token&refreshToken=\(after)")
            #expect(camelForm.status == .ok, "\(String(buffer: camelForm.body))")
            try await post("grant_type=refresh_token&refresh_token=%zz").expectEnvelope(.badRequest, "INVALID_ARGUMENT")
            try await post("refresh_token=\(next)").expectEnvelope(.badRequest, "INVALID_GRANT_TYPE")
        }
    }
}
