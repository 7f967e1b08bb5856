import Foundation
import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// Decoding of the rows that select ``UserRepository/columns``.
extension UserRepository {
    static func decode(_ rows: PostgresRowSequence, tenant: TenantScope) async throws -> [(User, String?)] {
        var users: [(User, String?)] = []
        for try await row in rows {
            if let user = try decode(row, tenant: tenant) { users.append(user) }
        }
        return users
    }

    /// Decodes ``columns`` starting at column `offset` of `row`.
    static func decode(_ row: PostgresRow, tenant: TenantScope, offset: Int = 0) throws -> (User, String?)? {
        let cells = PostgresRandomAccessRow(row)
        guard cells.count >= offset + 14 else { return nil }
        func cell<Value: PostgresDecodable>(_ index: Int, as type: Value.Type = Value.self) throws -> Value {
            try cells[offset + index].decode(Value.self, context: .default)
        }
        let attributes: String = try cell(6)
        let hash: String? = try cell(7)
        let user = User(
            tenantId: tenant.tenantId, uid: try cell(0), email: try cell(1), emailVerified: try cell(2), displayName: try cell(3),
            photoURL: try cell(4), disabled: try cell(5),
            customAttributes: try JSONValue.parse(Array(attributes.utf8)).objectValue ?? [:],
            hasPassword: hash != nil, providers: try Self.decodeProviders(try cell(13)), createdAt: try cell(8),
            lastLoginAt: (try cell(9, as: Int64?.self)).map(Timestamp.init(microseconds:)), lastRefreshAt: try cell(10),
            passwordUpdatedAt: (try cell(12, as: Int64?.self)).map(Timestamp.init(microseconds:)),
            validSince: Timestamp(microseconds: try cell(11)))
        return (user, hash)
    }

    // PostgreSQL wrote this JSON: a parse failure is a fault to report, not an empty list.
    private static func decodeProviders(_ json: String) throws -> [ProviderLink] {
        guard case .array(let rows) = try JSONValue.parse(Array(json.utf8)) else { return [] }
        return rows.compactMap { row in
            guard case .array(let fields) = row, fields.count == 5, case .string(let provider) = fields[0],
                case .string(let federatedId) = fields[1]
            else { return nil }
            func text(_ value: JSONValue) -> String? { if case .string(let text) = value { text } else { nil } }
            return ProviderLink(
                providerId: provider, federatedId: federatedId, email: text(fields[2]), displayName: text(fields[3]),
                photoURL: text(fields[4]))
        }
    }
}
