import Foundation
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

extension UserRepository {
    /// One user to import: its index in the request, the account, and the hash to store.
    public struct ImportRow: Sendable {
        /// The user's index in the request (errors are reported by it).
        public var index: Int
        /// The account, with its provider links.
        public var user: User
        /// The stored form of its password hash, if any.
        public var passwordHash: String?

        /// A row.
        public init(index: Int, user: User, passwordHash: String?) {
            self.index = index
            self.user = user
            self.passwordHash = passwordHash
        }
    }

    /// Inserts users with their links in one statement (`accounts:batchCreate`): a user whose
    /// uid, email or a provider identity is taken is left out whole and reported by index
    /// with its `Conflict` (`uidTaken`, `emailTaken`, `identityLinked`); the rest go in.
    ///
    /// The statement checks first and inserts the rest; a user created by someone else
    /// between the two (a concurrent sign-up) trips a unique index, and the statement is
    /// run again, seeing it, so nothing is ever half written.
    /// The audit entry `audit` makes from the refusals is written in the same transaction, so
    /// an import is never stored without its record.
    /// - Returns: the refused users' conflicts, by index; throws `Conflict.tenantMissing` when the tenant is gone.
    public func importUsers(
        tenant: TenantScope, _ rows: [ImportRow], audit: @escaping @Sendable ([Int: Conflict]) -> AuditEntry?
    ) async throws -> [Int: Conflict] {
        guard !rows.isEmpty else { return [:] }
        let users = JSONValue.array(
            rows.map { row in
                let user = row.user
                return .object([
                    "idx": .integer(Int64(row.index)), "uid": .string(user.uid), "email": user.email.map(JSONValue.string) ?? .null,
                    "email_verified": .bool(user.emailVerified), "display_name": user.displayName.map(JSONValue.string) ?? .null,
                    "photo_url": user.photoURL.map(JSONValue.string) ?? .null, "disabled": .bool(user.disabled),
                    "custom_attributes": .string(JSONValue.object(user.customAttributes).serialized()),
                    "password_hash": row.passwordHash.map(JSONValue.string) ?? .null,
                    "created_us": .integer(Timestamp(user.createdAt).microseconds),
                    "last_login_us": user.lastLoginAt.map { .integer($0.microseconds) } ?? .null,
                    "password_updated_us": row.passwordHash == nil
                        ? .null : user.passwordUpdatedAt.map { .integer($0.microseconds) } ?? .null,
                ])
            }
        ).serialized()
        let links = JSONValue.array(
            rows.flatMap { row in
                row.user.providers.map { link in
                    JSONValue.object([
                        "idx": .integer(Int64(row.index)), "provider_id": .string(link.providerId),
                        "federated_id": .string(link.federatedId), "email": link.email.map(JSONValue.string) ?? .null,
                        "display_name": link.displayName.map(JSONValue.string) ?? .null,
                        "photo_url": link.photoURL.map(JSONValue.string) ?? .null,
                    ])
                }
            }
        ).serialized()
        let query: PostgresQuery = """
            WITH tenant AS (SELECT 1 FROM tenants WHERE tenant_id = \(tenant.key) FOR SHARE),
            input AS (
                SELECT * FROM json_to_recordset(\(users)::json) AS i(idx int, uid text, email text, email_verified boolean,
                    display_name text, photo_url text, disabled boolean, custom_attributes text, password_hash text,
                    created_us bigint, last_login_us bigint, password_updated_us bigint)),
            links AS (
                SELECT * FROM json_to_recordset(\(links)::json) AS l(idx int, provider_id text, federated_id text, email text,
                    display_name text, photo_url text)),
            refused AS (
                SELECT i.idx,
                    CASE WHEN EXISTS (SELECT 1 FROM users x WHERE x.tenant_id = \(tenant.key) AND x.uid = i.uid) THEN 'uid'
                         WHEN i.email IS NOT NULL AND EXISTS (
                            SELECT 1 FROM users x WHERE x.tenant_id = \(tenant.key) AND lower(x.email) = lower(i.email)) THEN 'email'
                         WHEN EXISTS (
                            SELECT 1 FROM links l JOIN user_providers p ON p.tenant_id = \(tenant.key) AND p.provider_id = l.provider_id
                                AND p.federated_id = l.federated_id
                            WHERE l.idx = i.idx) THEN 'link'
                    END AS reason
                FROM input i),
            accepted AS (
                SELECT i.* FROM input i JOIN refused r ON r.idx = i.idx
                WHERE r.reason IS NULL AND (\(tenant.key) = '' OR EXISTS (SELECT 1 FROM tenant))),
            created AS (
                INSERT INTO users (tenant_id, uid, email, email_verified, display_name, photo_url, disabled,
                    custom_attributes, password_hash, valid_since_us, last_login_us, created_at, password_updated_us)
                SELECT \(tenant.key), a.uid, a.email, a.email_verified, a.display_name, a.photo_url, a.disabled,
                    a.custom_attributes::jsonb, a.password_hash, 0, a.last_login_us, to_timestamp(a.created_us / 1e6),
                    a.password_updated_us
                FROM accepted a
                RETURNING uid),
            linked AS (
                INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email, display_name, photo_url)
                SELECT \(tenant.key), l.provider_id, l.federated_id, a.uid, l.email, l.display_name, l.photo_url
                FROM links l JOIN accepted a ON a.idx = l.idx)
            SELECT idx, reason, (\(tenant.key) = '' OR EXISTS (SELECT 1 FROM tenant)) FROM refused WHERE reason IS NOT NULL
            UNION ALL SELECT -1, NULL, (\(tenant.key) = '' OR EXISTS (SELECT 1 FROM tenant))
            """
        // A concurrent writer can take a uid, email or identity between the check and the
        // insert; the retry sees it. Three rounds of such bad luck in a row is a fault.
        for _ in 1...3 {
            do {
                return try await database.withTransaction { transaction in
                    var errors: [Int: Conflict] = [:]
                    var tenantExists = true
                    for try await (index, reason, exists) in try await transaction.query(query, logger: logger).decode(
                        (Int, String?, Bool).self)
                    {
                        tenantExists = exists
                        switch reason {
                        case "uid"?: errors[index] = .uidTaken
                        case "email"?: errors[index] = .emailTaken
                        case "link"?: errors[index] = .identityLinked
                        default: break
                        }
                    }
                    guard tenantExists else { throw Conflict.tenantMissing }
                    if let entry = audit(errors) { try await AuditLogRepository.record(entry, in: transaction, logger: logger) }
                    return errors
                }
            } catch let conflict as Conflict where conflict != .tenantMissing {
                continue
            }
        }
        throw AuthError(.internalError, detail: "import kept racing concurrent writers")
    }
}
