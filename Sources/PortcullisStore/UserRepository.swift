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

    /// A user's provider links as a JSON array of `[provider, federated id, email, name, photo]`,
    /// read by a correlated subquery beside the user's columns (one index probe, no second round trip).
    static let providersColumn = """
        (SELECT coalesce(json_agg(json_build_array(p.provider_id, p.federated_id, p.email, p.display_name, p.photo_url)
                ORDER BY p.provider_id, p.federated_id), '[]')::text
         FROM user_providers p WHERE p.tenant_id = users.tenant_id AND p.uid = users.uid)
        """

    private static let plainColumns = [
        "uid", "email", "email_verified", "display_name", "photo_url", "disabled", "custom_attributes::text", "password_hash",
        "created_at", "last_login_us", "last_refresh_at", "valid_since_us",
    ]

    /// What every user read selects, in the order ``decode(_:tenantId:offset:)`` reads.
    static let columns = (plainColumns + [providersColumn]).joined(separator: ", ")

    /// ``columns`` qualified by the table name, for statements joining other tables.
    static let qualifiedColumns = (plainColumns.map { "users." + $0 } + [providersColumn]).joined(separator: ", ")

    /// Inserts a user with its links (the `password` link, and a federated identity for a
    /// federated sign-up), in one statement: `EMAIL_EXISTS`, `DUPLICATE_LOCAL_ID` or
    /// `FEDERATED_USER_ID_ALREADY_LINKED` on a unique clash, `TENANT_NOT_FOUND` when the
    /// tenant is gone.
    ///
    /// Users have no foreign key to tenants (project users have no tenant row), so the tenant
    /// row is held `FOR SHARE` as one would be: its deletion waits and takes the new user
    /// along, or came first and nothing is written (whatever an instance's cache believes).
    public func create(_ user: User, passwordHash: String?) async throws -> User {
        do {
            return try await database.withConnection { connection in
                try await insert(user, passwordHash: passwordHash, on: connection)
            }
        } catch let violation as UniqueViolation {
            throw Self.creationConflict(violation)
        }
    }

    /// What a unique index refusing a new user means.
    static func creationConflict(_ violation: UniqueViolation) -> AuthError {
        switch violation.constraint {
        case "users_email_unique": AuthError(.emailExists)
        case "user_providers_pkey": AuthError(.federatedUserIdAlreadyLinked)
        default: AuthError(.duplicateLocalId)
        }
    }

    /// ``create(_:passwordHash:)``'s statement, on `connection` (inside the caller's transaction
    /// when there is one); unique clashes come out as ``UniqueViolation``.
    func insert(_ user: User, passwordHash: String?, on connection: PostgresConnection) async throws -> User {
        var user = user
        user.syncPasswordLink()
        let links = JSONValue.array(
            user.providers.map { link in
                .object([
                    "provider_id": .string(link.providerId), "federated_id": .string(link.federatedId),
                    "email": link.email.map(JSONValue.string) ?? .null,
                    "display_name": link.displayName.map(JSONValue.string) ?? .null,
                    "photo_url": link.photoURL.map(JSONValue.string) ?? .null,
                ])
            }
        ).serialized()
        let tenant = user.tenantId ?? ""
        let rows = try await connection.query(
            """
            WITH tenant AS (SELECT 1 FROM tenants WHERE tenant_id = \(tenant) FOR SHARE),
            created AS (
                INSERT INTO users (tenant_id, uid, email, email_verified, display_name, photo_url, disabled,
                    custom_attributes, password_hash, valid_since_us, last_login_us, created_at)
                SELECT \(tenant), \(user.uid), \(user.email), \(user.emailVerified), \(user.displayName),
                    \(user.photoURL), \(user.disabled), \(JSONValue.object(user.customAttributes).serialized())::jsonb,
                    \(passwordHash), \(user.validSince.microseconds), \(user.lastLoginAt?.microseconds), \(user.createdAt)
                WHERE \(tenant) = '' OR EXISTS (SELECT 1 FROM tenant)
                RETURNING \(unescaped: Self.columns)),
            linked AS (
                INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email, display_name, photo_url)
                SELECT \(tenant), l.provider_id, l.federated_id, created.uid, l.email, l.display_name, l.photo_url
                FROM created, json_to_recordset(\(links)::json)
                    AS l(provider_id text, federated_id text, email text, display_name text, photo_url text))
            SELECT * FROM created
            """, logger: logger)
        // The statement's snapshot predates its own link: the links are the ones just written.
        guard var (created, _) = try await Self.decode(rows, tenantId: user.tenantId).first else {
            throw AuthError(.tenantNotFound)
        }
        created.providers = user.providers
        return created
    }

    /// Stores `user.passwordLink` as the account's only `password` link (or none).
    func syncPasswordLink(of user: User, on connection: PostgresConnection) async throws {
        let link = user.passwordLink
        try await connection.query(
            """
            DELETE FROM user_providers
            WHERE tenant_id = \(user.tenantId ?? "") AND uid = \(user.uid) AND provider_id = \(ProviderLink.password)
              AND federated_id IS DISTINCT FROM \(link?.federatedId)
            """, logger: logger)
        guard let link else { return }
        try await connection.query(
            """
            INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email)
            VALUES (\(user.tenantId ?? ""), \(link.providerId), \(link.federatedId), \(user.uid), \(link.email))
            ON CONFLICT (tenant_id, provider_id, federated_id) DO NOTHING
            """, logger: logger)
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
            for try await found in try await connection.execute(
                FindByEmail(tenant: tenantId ?? "", email: email), logger: logger)
            {
                return found
            }
            return nil
        }
    }

    /// Every password sign-in starts here: prepared once per connection, so PostgreSQL
    /// parses and plans it once rather than on every sign-in.
    private struct FindByEmail: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_find_user_by_email"
        static let sql = "SELECT \(UserRepository.columns) FROM users WHERE tenant_id = $1 AND lower(email) = lower($2)"
        static let bindingDataTypes: [PostgresDataType] = [.text, .text]

        let tenant: String
        let email: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(tenant)
            bindings.append(email)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> (user: User, passwordHash: String?)? {
            try UserRepository.decode(row, tenantId: tenant.isEmpty ? nil : tenant).map { (user: $0.0, passwordHash: $0.1) }
        }
    }

    /// What must still hold of the stored user for an update to apply.
    public enum Precondition: Sendable {
        /// Nothing: admin updates.
        case none
        /// Not disabled: end-user updates (a user disabled meanwhile changes nothing).
        case enabled
        /// Anonymous and not disabled: no email, password or provider link (the upgrade of
        /// an anonymous account, which two requests must not both perform).
        case anonymous

        var sql: String {
            switch self {
            case .none: ""
            case .enabled: "AND NOT disabled"
            case .anonymous:
                """
                AND NOT disabled AND email IS NULL AND password_hash IS NULL
                AND NOT EXISTS (SELECT 1 FROM user_providers p WHERE p.tenant_id = users.tenant_id AND p.uid = users.uid)
                """
            }
        }
    }

    /// Applies `update` in one transaction: one statement assigns exactly the fields it
    /// sets (everything else keeps the value the row holds when the statement runs, so
    /// a concurrent change to another field survives), then the `password` link follows
    /// the email and password, and other instances are notified when the revocation
    /// state changed. `EMAIL_EXISTS` when the new email belongs to another user.
    ///
    /// - Returns: the user as stored, or `nil` when no user matched `uid` and `precondition`.
    public func update(
        tenantId: String?, uid: String, _ update: UserUpdate, requiring precondition: Precondition = .none
    ) async throws -> User? {
        do {
            return try await database.withTransaction { connection in
                try await self.update(tenantId: tenantId, uid: uid, update, requiring: precondition, on: connection)
            }
        } catch is UniqueViolation {
            throw AuthError(.emailExists)
        }
    }

    /// ``update(tenantId:uid:_:requiring:)`` inside the caller's transaction (applying an
    /// action code consumes the code and changes the user in one). A clash on the email
    /// index surfaces as `UniqueViolation` for the caller to translate.
    func update(
        tenantId: String?, uid: String, _ update: UserUpdate, requiring precondition: Precondition,
        on connection: PostgresConnection
    ) async throws -> User? {
        let rows = try await connection.query(
            Self.updateStatement(tenantId: tenantId, uid: uid, update, requiring: precondition), logger: logger)
        guard var (user, _) = try await Self.decode(rows, tenantId: tenantId).first else { return nil }
        if update.changesPasswordLink {
            // The statement's snapshot predates the link it is about to rewrite.
            user.syncPasswordLink()
            try await syncPasswordLink(of: user, on: connection)
        }
        if update.changesRevocationState {
            try await InvalidationEvent.user(tenantId: tenantId, uid: uid).send(on: connection, logger: logger)
        }
        return user
    }

    /// ``update(tenantId:uid:_:requiring:)``'s statement: assigns exactly the fields `update`
    /// sets and returns the row (no row when `uid` or `precondition` does not match).
    static func updateStatement(
        tenantId: String?, uid: String, _ update: UserUpdate, requiring precondition: Precondition
    ) -> PostgresQuery {
        let tenant = tenantId ?? ""
        let claims = update.customAttributes.map { JSONValue.object($0).serialized() }
        let (revocationMode, revocationValue): (Int, Int64) =
            switch update.revocation {
            case nil: (0, 0)
            case .now(let now)?: (1, now.microseconds)
            case .at(let watermark)?: (2, watermark.microseconds)
            }
        // Every SET expression sees the row as it was before this statement: `email IS
        // DISTINCT FROM` compares with the old email. A revocation to `now` moves the
        // watermark forward (by 1 µs at least: each change's caller starts its session under
        // its own) and past the user's latest session start, which the row lock orders
        // before this statement (another instance's clock may run ahead).
        let query: PostgresQuery = """
            UPDATE users SET
                email = CASE WHEN \(update.email != nil) THEN \(update.email ?? nil) ELSE email END,
                email_verified = CASE WHEN \(update.emailVerified != nil) THEN \(update.emailVerified ?? false)
                    WHEN \(update.email != nil) AND email IS DISTINCT FROM \(update.email ?? nil) THEN false
                    ELSE email_verified END,
                display_name = CASE WHEN \(update.displayName != nil) THEN \(update.displayName ?? nil) ELSE display_name END,
                photo_url = CASE WHEN \(update.photoURL != nil) THEN \(update.photoURL ?? nil) ELSE photo_url END,
                disabled = CASE WHEN \(update.disabled != nil) THEN \(update.disabled ?? false) ELSE disabled END,
                custom_attributes = CASE WHEN \(claims != nil) THEN \(claims)::jsonb ELSE custom_attributes END,
                password_hash = CASE WHEN \(update.passwordHash != nil) THEN \(update.passwordHash) ELSE password_hash END,
                valid_since_us = CASE \(revocationMode)::int
                    WHEN 1 THEN greatest(valid_since_us + 1, \(revocationValue), coalesce(last_login_us, 0) + 1)
                    WHEN 2 THEN \(revocationValue)
                    ELSE valid_since_us END
            WHERE tenant_id = \(tenant) AND uid = \(uid) \(unescaped: precondition.sql)
            RETURNING \(unescaped: Self.columns)
            """
        return query
    }

    /// The user row, locked `FOR UPDATE` in the caller's transaction; `nil` when absent.
    func lockedUser(tenantId: String?, uid: String, on connection: PostgresConnection) async throws -> User? {
        let rows = try await connection.query(
            "SELECT \(unescaped: Self.columns) FROM users WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid) FOR UPDATE",
            logger: logger)
        return try await Self.decode(rows, tenantId: tenantId).first?.0
    }

    /// Deletes the user (their refresh sessions and action codes go with them); `false` when absent.
    ///
    /// The sessions go first, then the user row: the order a refresh locks them in (it
    /// rotates the session row, then stamps the user row). Deleting the user row first and
    /// its sessions by cascade took the two locks the other way round, and a refresh racing
    /// the deletion deadlocked with it (PostgreSQL then aborted one of the two: a 500).
    public func delete(tenantId: String?, uid: String) async throws -> Bool {
        try await database.withTransaction { connection in
            try await connection.query(
                "DELETE FROM refresh_sessions WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid)", logger: logger)
            try await connection.query(
                "DELETE FROM action_codes WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid)", logger: logger)
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
    public func revocationState(tenantId: String?, uid: String) async throws -> (validSince: Timestamp, disabled: Bool)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT valid_since_us, disabled FROM users WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid)",
                logger: logger)
            for try await (validSince, disabled) in rows.decode((Int64, Bool).self) {
                return (Timestamp(microseconds: validSince), disabled)
            }
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
        guard cells.count >= offset + 13 else { return nil }
        func cell<Value: PostgresDecodable>(_ index: Int, as type: Value.Type = Value.self) throws -> Value {
            try cells[offset + index].decode(Value.self, context: .default)
        }
        let attributes: String = try cell(6)
        let hash: String? = try cell(7)
        let user = User(
            tenantId: tenantId, uid: try cell(0), email: try cell(1), emailVerified: try cell(2), displayName: try cell(3),
            photoURL: try cell(4), disabled: try cell(5),
            customAttributes: try JSONValue.parse(Array(attributes.utf8)).objectValue ?? [:],
            hasPassword: hash != nil, providers: try Self.decodeProviders(try cell(12)), createdAt: try cell(8),
            lastLoginAt: (try cell(9, as: Int64?.self)).map(Timestamp.init(microseconds:)), lastRefreshAt: try cell(10),
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
