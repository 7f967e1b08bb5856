import Foundation
import Logging
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// Updates of one user: one statement assigning exactly the fields an update sets,
/// under a precondition on the stored row.
extension UserRepository {
    /// What must still hold of the stored user for an update to apply.
    public enum Precondition: Sendable {
        /// Nothing: admin updates.
        case none
        /// Not disabled: end-user updates (a user disabled meanwhile changes nothing).
        case enabled
        /// Anonymous and not disabled: no email, password or provider link (the upgrade of
        /// an anonymous account, which two requests must not both perform).
        case anonymous

        /// Whether `user`, as read, meets it.
        func holds(for user: User) -> Bool {
            switch self {
            case .none: true
            case .enabled: !user.disabled
            case .anonymous: !user.disabled && user.email == nil && !user.hasPassword && user.providers.isEmpty
            }
        }

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

    /// Applies `update` in a transaction of its own (``update(tenant:uid:_:requiring:in:)``).
    ///
    /// - Returns: the user as stored, or `nil` when no user matched `uid` and `precondition`.
    public func update(
        tenant: TenantScope, uid: String, _ update: UserUpdate, requiring precondition: Precondition = .none
    ) async throws -> User? {
        try await database.withTransaction { transaction in
            try await self.update(tenant: tenant, uid: uid, update, requiring: precondition, in: transaction)
        }
    }

    /// Applies `update` in `transaction`: one statement assigns exactly the fields it sets
    /// (everything else keeps the value the row holds when the statement runs, so a
    /// concurrent change to another field survives), then the `password` link follows the
    /// email and password, and the change is announced when the revocation state changed.
    /// `Conflict.emailTaken` when the new email belongs to another user.
    ///
    /// Every change of a user row goes through here: the one builder of its SQL.
    /// - Returns: the user as stored, or `nil` when no user matched `uid` and `precondition`.
    public func update(
        tenant: TenantScope, uid: String, _ update: UserUpdate, requiring precondition: Precondition,
        in transaction: Transaction
    ) async throws -> User? {
        let rows = try await transaction.query(
            Self.updateStatement(tenant: tenant, uid: uid, update, requiring: precondition), logger: logger)
        guard var (user, _) = try await Self.decode(rows, tenant: tenant).first else { return nil }
        if update.changesPasswordLink {
            // The statement's snapshot predates the link it is about to rewrite.
            user.syncPasswordLink()
            try await syncPasswordLink(of: user, in: transaction)
        }
        if update.changesRevocationState {
            try await transaction.announce(.user(tenant, uid: uid), logger: logger)
        }
        return user
    }

    /// ``update(tenant:uid:_:requiring:in:)``'s statement: assigns exactly the fields `update`
    /// sets and returns the row (no row when `uid` or `precondition` does not match).
    static func updateStatement(
        tenant: TenantScope, uid: String, _ update: UserUpdate, requiring precondition: Precondition
    ) -> PostgresQuery {
        let claims = update.customAttributes.map { JSONValue.object($0).serialized() }
        let (revocationMode, revocationValue): (Int, Int64) =
            switch update.revocation {
            case nil: (0, 0)
            case .now(let now)?: (1, now.microseconds)
            case .at(let watermark)?: (2, watermark.microseconds)
            }
        // Every SET expression sees the row as it was before this statement: `email IS
        // DISTINCT FROM` compares with the old email. A revocation to `now` is
        // SessionPolicy.revocationWatermark: the second after the latest of now, the old
        // watermark and the user's latest session start (which the row lock orders before
        // this statement; another instance's clock may run ahead).
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
                password_hash = CASE WHEN \(update.passwordHash != nil) THEN \(update.passwordHash ?? nil) ELSE password_hash END,
                password_updated_us = CASE WHEN \(update.passwordHash != nil) THEN \(update.passwordSetAt?.microseconds)
                    ELSE password_updated_us END,
                valid_since_us = CASE \(revocationMode)::int
                    WHEN 1 THEN (greatest(valid_since_us, \(revocationValue), coalesce(last_login_us, 0)) / 1000000 + 1) * 1000000
                    WHEN 2 THEN \(revocationValue)
                    ELSE valid_since_us END
            WHERE tenant_id = \(tenant.key) AND uid = \(uid) \(unescaped: precondition.sql)
            RETURNING \(unescaped: Self.columns)
            """
        return query
    }
}
