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

extension TestGateway {
    /// `/v1/projects/{p}[/tenants/{t}]/accounts`: the admin user API's base path.
    static func accounts(tenant: String?) -> String {
        "/v1/projects/\(projectId)\(tenant.map { "/tenants/\($0)" } ?? "")/accounts"
    }

    /// `POST …/accounts<operation>` with the project key unless `key` says otherwise.
    @discardableResult
    func admin(_ operation: String, tenant: String?, _ json: String, key: String?? = .none) async throws -> TestResponse {
        try await send(.post, Self.accounts(tenant: tenant) + operation, json: json, key: key)
    }

    /// `GET …/accounts:batchGet?<query>`.
    func batchGet(tenant: String?, _ query: String, key: String?? = .none) async throws -> TestResponse {
        try await send(.get, Self.accounts(tenant: tenant) + ":batchGet" + (query.isEmpty ? "" : "?\(query)"), key: key)
    }

    /// The one user `accounts:lookup` finds by uid, or `nil`.
    func adminUser(_ uid: String, tenant: String?) async throws -> JSONValue? {
        let response = try await admin(":lookup", tenant: tenant, #"{"localId":["\#(uid)"]}"#)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.json().list(at: ["users"]).first
    }

    /// Creates a user through the admin API and returns its uid.
    @discardableResult
    func createUser(_ json: String, tenant: String?) async throws -> String {
        let response = try await admin("", tenant: tenant, json)
        guard response.status == .ok, case .string(let uid)? = try response.json().value(at: ["localId"]) else {
            throw TestSetupError("create failed: \(String(buffer: response.body))")
        }
        return uid
    }
}
