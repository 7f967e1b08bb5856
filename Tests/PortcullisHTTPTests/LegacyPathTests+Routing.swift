import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisCore
import PortcullisJSON
import PortcullisTestSupport
import Testing

/// `getProjectConfig` and the paths that are not operations.
extension LegacyPathTests {
    @Test("getProjectConfig answers the project id and the authorised domains", arguments: prefixes)
    func projectConfig(prefix: String) async throws {
        try await TestGateway.run { gateway in
            let path = "\(prefix)/identitytoolkit/v3/relyingparty/getProjectConfig"
            let initial = try await gateway.client.execute(uri: "\(path)?key=\(TestGateway.apiKey)", method: .get)
            #expect(initial.status == .ok, "\(String(buffer: initial.body))")
            #expect(try initial.json().value(at: ["projectId"]) == .string(TestGateway.projectId))
            #expect(try initial.json().value(at: ["authorizedDomains"]) == .array(["localhost"]))
            // Only what Google answers an app: the developer-only switches stay out.
            #expect(
                try initial.json() == .object(["projectId": .string(TestGateway.projectId), "authorizedDomains": .array(["localhost"])]))

            let patched = try await gateway.send(
                .patch, "/v2/projects/\(TestGateway.projectId)/config?updateMask=authorizedDomains,allowPasswordSignup",
                json: #"{"authorizedDomains":["app.example.com","localhost"],"allowPasswordSignup":true}"#)
            #expect(patched.status == .ok, "\(String(buffer: patched.body))")
            let config = try await gateway.client.execute(uri: "\(path)?key=\(TestGateway.apiKey)", method: .get).json()
            #expect(config.value(at: ["authorizedDomains"]) == .array(["localhost", "app.example.com"]))
            // The v1 path it aliases, as current SDKs call it under the emulator prefix.
            let v1 = try await gateway.client.execute(
                uri: "/identitytoolkit.googleapis.com/v1/projects?key=\(TestGateway.apiKey)", method: .get)
            #expect(try v1.json() == config)

            try await gateway.client.execute(uri: path, method: .get).expectEnvelope(.badRequest, "API key not valid")
        }
    }

    @Test(
        "an unknown v3 operation, a v1 path under /www.googleapis.com, and a wrong method are 404 with the envelope",
        arguments: prefixes)
    func unknown(prefix: String) async throws {
        try await TestGateway.run { gateway in
            for operation in ["signOutUser", "downloadAccount", "uploadAccount", "", "verifyPassword/extra", "VerifyPassword"] {
                let response = try await gateway.client.execute(
                    uri: "\(prefix)/identitytoolkit/v3/relyingparty/\(operation)?key=\(TestGateway.apiKey)", method: .post,
                    headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}"))
                response.expectEnvelope(.notFound, "NOT_FOUND")
                #expect(try response.json().value(at: ["error", "status"]) == "NOT_FOUND", "\(operation)")
            }
            try await gateway.client.execute(
                uri: "/www.googleapis.com/v1/accounts:signUp?key=\(TestGateway.apiKey)", method: .post,
                headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}")
            )
            .expectEnvelope(.notFound, "NOT_FOUND")
            try await gateway.client.execute(
                uri: "\(prefix)/identitytoolkit/v3/relyingparty/verifyPassword?key=\(TestGateway.apiKey)", method: .get
            )
            .expectEnvelope(.notFound, "NOT_FOUND")
        }
    }
}
