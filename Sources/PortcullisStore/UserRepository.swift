import Foundation
public import Logging
public import PortcullisCore
import PortcullisJSON
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
        "created_at", "last_login_us", "last_refresh_at", "valid_since_us", "password_updated_us",
    ]

    /// What every user read selects, in the order ``decode(_:tenant:offset:)`` reads.
    static let columns = (plainColumns + [providersColumn]).joined(separator: ", ")

    /// ``columns`` qualified by the table name, for statements joining other tables.
    static let qualifiedColumns = (plainColumns.map { "users." + $0 } + [providersColumn]).joined(separator: ", ")

    /// Inserts a user with its links (the `password` link, and a federated identity for a
    /// federated sign-up) and starts its first session, in one transaction: a sign-up is
    /// answered only once both have committed, and a failure leaves neither, so the client's
    /// retry never meets `EMAIL_EXISTS` for an account it was never told about.
    /// A unique clash is its `Conflict` (`emailTaken`, `uidTaken`, `identityLinked`), a
    /// tenant gone meanwhile `tenantMissing`.
    ///
    /// Users have no foreign key to tenants (project users have no tenant row), so the tenant
    /// row is held `FOR SHARE` as one would be: its deletion waits and takes the new user
    /// along, or came first and nothing is written (whatever an instance's cache believes).
    /// - Returns: the user as stored and its session's start.
    public func create(
        _ user: User, passwordHash: String?, firstSession: SessionStart
    ) async throws -> (user: User, started: Timestamp) {
        try await database.withTransaction { [self] transaction in
            let created = try await insert(user, passwordHash: passwordHash, in: transaction)
            guard let started = try await RefreshSessionRepository.start(firstSession, in: transaction, logger: logger)
            else { throw AuthError(.internalError, detail: "a new user's session did not start") }
            return (created, started)
        }
    }

    /// The insert of ``create(_:passwordHash:firstSession:)``, inside the caller's transaction;
    /// unique clashes come out as their `Conflict`.
    func insert(_ user: User, passwordHash: String?, in transaction: Transaction) async throws -> User {
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
        let tenant = user.scope.key
        let rows = try await transaction.query(
            """
            WITH tenant AS (SELECT 1 FROM tenants WHERE tenant_id = \(tenant) FOR SHARE),
            created AS (
                INSERT INTO users (tenant_id, uid, email, email_verified, display_name, photo_url, disabled,
                    custom_attributes, password_hash, valid_since_us, last_login_us, created_at, password_updated_us)
                SELECT \(tenant), \(user.uid), \(user.email), \(user.emailVerified), \(user.displayName),
                    \(user.photoURL), \(user.disabled), \(JSONValue.object(user.customAttributes).serialized())::jsonb,
                    \(passwordHash), \(user.validSince.microseconds), \(user.lastLoginAt?.microseconds), \(user.createdAt),
                    \(passwordHash == nil ? nil : Timestamp(user.createdAt).microseconds)
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
        guard var (created, _) = try await Self.decode(rows, tenant: user.scope).first else {
            throw Conflict.tenantMissing
        }
        created.providers = user.providers
        return created
    }

    /// Stores `user.passwordLink` as the account's only `password` link (or none).
    func syncPasswordLink(of user: User, in transaction: Transaction) async throws {
        let link = user.passwordLink
        try await transaction.query(
            """
            DELETE FROM user_providers
            WHERE tenant_id = \(user.scope.key) AND uid = \(user.uid) AND provider_id = \(ProviderLink.password)
              AND federated_id IS DISTINCT FROM \(link?.federatedId)
            """, logger: logger)
        guard let link else { return }
        try await transaction.query(
            """
            INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email)
            VALUES (\(user.scope.key), \(link.providerId), \(link.federatedId), \(user.uid), \(link.email))
            ON CONFLICT (tenant_id, provider_id, federated_id) DO NOTHING
            """, logger: logger)
    }

    /// Deletes the user (their refresh sessions and action codes go with them); `false` when absent.
    ///
    /// The sessions go first, then the user row: the order a refresh locks them in (it
    /// rotates the session row, then stamps the user row). Deleting the user row first and
    /// its sessions by cascade took the two locks the other way round, and a refresh racing
    /// the deletion deadlocked with it (PostgreSQL then aborted one of the two: a 500).
    public func delete(tenant: TenantScope, uid: String) async throws -> Bool {
        try await database.withTransaction { transaction in
            try await transaction.query(
                "DELETE FROM refresh_sessions WHERE tenant_id = \(tenant.key) AND uid = \(uid)", logger: logger)
            try await transaction.query(
                "DELETE FROM action_codes WHERE tenant_id = \(tenant.key) AND uid = \(uid)", logger: logger)
            let rows = try await transaction.query(
                "DELETE FROM users WHERE tenant_id = \(tenant.key) AND uid = \(uid) RETURNING uid", logger: logger)
            var deleted = false
            for try await _ in rows.decode(String.self) { deleted = true }
            if deleted {
                try await transaction.announce(.user(tenant, uid: uid), logger: logger)
            }
            return deleted
        }
    }

    /// The revocation state other instances cache for `checkRevoked`: `nil` when the user is gone.
    public func revocationState(tenant: TenantScope, uid: String) async throws -> (validSince: Timestamp, disabled: Bool)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT valid_since_us, disabled FROM users WHERE tenant_id = \(tenant.key) AND uid = \(uid)",
                logger: logger)
            for try await (validSince, disabled) in rows.decode((Int64, Bool).self) {
                return (Timestamp(microseconds: validSince), disabled)
            }
            return nil
        }
    }
}
