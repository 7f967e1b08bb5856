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

/// Tokens minted by the official firebase-admin SDK.
extension CustomTokenTests {
    @Test("firebase-admin (Python) mints tokens from the gateway's service-account file that sign in, for the project and a tenant")
    func firebaseAdmin() async throws {
        let python = try InteropTests.tool("PORTCULLIS_TEST_PYTHON")
        let script = InteropTests.packageRoot.appendingPathComponent("Tests/interop/mint_custom_token.py").path
        try await TestGateway.run { gateway in
            let tenant = try await gateway.createTenant()
            for scope in [nil, tenant] {
                let signer = try await TestSigner.create(gateway, tenant: scope)
                let file = NSTemporaryDirectory() + "sa-\(UUID().uuidString).json"
                try (signer.file ?? "").write(toFile: file, atomically: false, encoding: .utf8)
                defer { try? FileManager.default.removeItem(atPath: file) }
                var arguments = [script, file, "py-user", #"{"role":"editor","level":2}"#]
                if let scope { arguments.append(scope) }
                let (status, output) = try InteropTests.run(python, arguments)
                #expect(status == 0, "\(output)")
                let token = output.trimmingCharacters(in: .whitespacesAndNewlines)
                let answer = try Answer(try await Self.signIn(gateway, token, tenant: scope))
                #expect(answer.isNewUser)
                #expect(answer.claims.value(at: ["sub"]) == "py-user")
                #expect(answer.claims.value(at: ["role"]) == "editor" && answer.claims.value(at: ["level"]) == .integer(2))
                #expect(answer.claims.value(at: ["firebase", "sign_in_provider"]) == "custom")
                #expect(answer.claims.value(at: ["firebase", "tenant"]) == scope.map(JSONValue.string))
            }
        }
    }
}
