import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// All SQL of the `users` table. Rows are keyed by (tenant, uid); `''` is the
/// project's own tenant key. Emails are unique per tenant case-insensitively,
/// enforced by an index, so concurrent sign-ups with one email make one user.
public struct UserRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    static let columns = """
        uid, email, email_verified, display_name, photo_url, disabled, custom_attributes::text, password_hash,
        created_at, last_login_at, last_refresh_at, valid_since
        """

    /// ``columns`` qualified by the table name, for statements joining other tables.
    static let qualifiedColumns = columns.split(separator: ",")
        .map { "users." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")

    /// Inserts a user: `EMAIL_EXISTS` or `DUPLICATE_LOCAL_ID` on a unique clash.
    public func create(_ user: User, passwordHash: String?) async throws -> User {
        do {
            return try await database.withConnection { connection in
                let rows = try await connection.query(
                    """
                    INSERT INTO users (tenant_id, uid, email, email_verified, display_name, photo_url, disabled,
                        custom_attributes, password_hash, valid_since, last_login_at)
                    VALUES (\(user.tenantId ?? ""), \(user.uid), \(user.email), \(user.emailVerified), \(user.displayName),
                        \(user.photoURL), \(user.disabled), \(JSONValue.object(user.customAttributes).serialized())::jsonb,
                        \(passwordHash), \(user.validSince), \(user.lastLoginAt))
                    RETURNING \(unescaped: Self.columns)
                    """, logger: logger)
                guard let (created, _) = try await Self.decode(rows, tenantId: user.tenantId).first else {
                    throw AuthError(.internalError)
                }
                return created
            }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw AuthError(
                error.serverInfo?[.constraintName] == "users_email_unique" ? .emailExists : .duplicateLocalId)
        }
    }

    /// The user and their password hash, or `nil`.
    public func find(tenantId: String?, uid: String) async throws -> (user: User, passwordHash: String?)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.columns) FROM users WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid)",
                logger: logger)
            return try await Self.decode(rows, tenantId: tenantId).first
        }
    }

    /// The user with this email (case-insensitive), or `nil`.
    public func find(tenantId: String?, email: String) async throws -> (user: User, passwordHash: String?)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM users
                WHERE tenant_id = \(tenantId ?? "") AND lower(email) = lower(\(email))
                """, logger: logger)
            return try await Self.decode(rows, tenantId: tenantId).first
        }
    }

    /// Writes every profile field of `user` (and the hash when given); `EMAIL_EXISTS` on a clash.
    /// Notifies other instances when `validSince` or `disabled` changed, for their revocation caches.
    public func save(_ user: User, passwordHash: String??, revocationChanged: Bool) async throws {
        do {
            try await database.withTransaction { connection in
                let setHash = passwordHash != nil
                try await connection.query(
                    """
                    UPDATE users SET email = \(user.email), email_verified = \(user.emailVerified),
                        display_name = \(user.displayName), photo_url = \(user.photoURL), disabled = \(user.disabled),
                        custom_attributes = \(JSONValue.object(user.customAttributes).serialized())::jsonb,
                        password_hash = CASE WHEN \(setHash) THEN \(passwordHash ?? nil) ELSE password_hash END,
                        valid_since = \(user.validSince), last_login_at = \(user.lastLoginAt)
                    WHERE tenant_id = \(user.tenantId ?? "") AND uid = \(user.uid)
                    """, logger: logger)
                if revocationChanged {
                    try await InvalidationEvent.user(tenantId: user.tenantId, uid: user.uid).send(on: connection, logger: logger)
                }
            }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw AuthError(.emailExists)
        }
    }

    /// Deletes the user (their refresh tokens go with them); `false` when absent.
    public func delete(tenantId: String?, uid: String) async throws -> Bool {
        try await database.withTransaction { connection in
            let rows = try await connection.query(
                "DELETE FROM users WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid) RETURNING uid", logger: logger)
            var deleted = false
            for try await _ in rows.decode(String.self) { deleted = true }
            if deleted {
                try await InvalidationEvent.user(tenantId: tenantId, uid: uid).send(on: connection, logger: logger)
            }
            return deleted
        }
    }

    /// The revocation state other instances cache for `checkRevoked`: `nil` when the user is gone.
    public func revocationState(tenantId: String?, uid: String) async throws -> (validSince: Int64, disabled: Bool)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT valid_since, disabled FROM users WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid)",
                logger: logger)
            for try await (validSince, disabled) in rows.decode((Int64, Bool).self) { return (validSince, disabled) }
            return nil
        }
    }

    static func decode(_ rows: PostgresRowSequence, tenantId: String?) async throws -> [(User, String?)] {
        var users: [(User, String?)] = []
        for try await row in rows {
            if let user = try decode(row, tenantId: tenantId) { users.append(user) }
        }
        return users
    }

    /// Decodes ``columns`` starting at column `offset` of `row`.
    static func decode(_ row: PostgresRow, tenantId: String?, offset: Int = 0) throws -> (User, String?)? {
        let cells = PostgresRandomAccessRow(row)
        guard cells.count >= offset + 12 else { return nil }
        func cell<Value: PostgresDecodable>(_ index: Int, as type: Value.Type = Value.self) throws -> Value {
            try cells[offset + index].decode(Value.self, context: .default)
        }
        let attributes: String = try cell(6)
        let hash: String? = try cell(7)
        let user = User(
            tenantId: tenantId, uid: try cell(0), email: try cell(1), emailVerified: try cell(2), displayName: try cell(3),
            photoURL: try cell(4), disabled: try cell(5),
            customAttributes: (try? JSONValue.parse(Array(attributes.utf8)))?.objectValue ?? [:],
            hasPassword: hash != nil, createdAt: try cell(8), lastLoginAt: try cell(9), lastRefreshAt: try cell(10),
            validSince: try cell(11))
        return (user, hash)
    }
}
