import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// All SQL of federated identities (`user_providers` rows other than `password`): finding
/// the account an identity signs in to, linking, the takeover of an unproven account, and
/// unlinking. Each change is one transaction that takes the user's row lock first, so
/// the decision it applies is made on the account as it is when the change lands.
public struct ProviderLinkRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The account `providerId`'s identity `federatedId` is linked to, with the link as stored.
    public func account(
        tenantId: String?, providerId: String, federatedId: String
    ) async throws -> (user: User, link: ProviderLink)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: UserRepository.qualifiedColumns)
                FROM user_providers link JOIN users ON users.tenant_id = link.tenant_id AND users.uid = link.uid
                WHERE link.tenant_id = \(tenantId ?? "") AND link.provider_id = \(providerId)
                  AND link.federated_id = \(federatedId)
                """, logger: logger)
            guard let (user, _) = try await UserRepository.decode(rows, tenantId: tenantId).first,
                let link = user.providers.first(where: { $0.providerId == providerId && $0.federatedId == federatedId })
            else { return nil }
            return (user, link)
        }
    }

    /// Brings a link's copy of the provider's profile up to date (the provider's email,
    /// name and picture as of this sign-in).
    public func refresh(_ link: ProviderLink, tenantId: String?) async throws {
        _ = try await database.withTransaction { transaction in
            try await transaction.query(
                """
                UPDATE user_providers SET email = \(link.email), display_name = \(link.displayName), photo_url = \(link.photoURL)
                WHERE tenant_id = \(tenantId ?? "") AND provider_id = \(link.providerId) AND federated_id = \(link.federatedId)
                """, logger: logger)
        }
    }

    /// What a sign-in with a new identity did to the account that has its email.
    public enum EmailMatch: Sendable {
        /// No account has the email (any more).
        case noAccount
        /// The identity was linked; `replaced` when it took an unproven account over.
        case linked(User, replaced: Bool)
        /// The account and the identity may not be merged automatically.
        case needConfirmation(User)
    }

    /// Links `link` to the account that has `email`, as `decide` rules for the account
    /// locked for the change (DESIGN.md §1's four cases).
    ///
    /// A `AccountLinking.Decision.replace(unlinking:removePassword:)` removes the named
    /// providers (and the password), marks the email verified, overwrites the profile with
    /// `profile`, and revokes every earlier session (to `SessionPolicy.revocationWatermark`);
    /// a `AccountLinking.Decision.link` marks the email verified when `provesEmail`.
    /// An error `decide` throws (a disabled account) aborts the change. `FEDERATED_USER_ID_ALREADY_LINKED`
    /// when the identity got linked elsewhere meanwhile.
    public func linkByEmail(
        _ link: ProviderLink, email: String, tenantId: String?, provesEmail: Bool,
        profile: (displayName: String?, photoURL: String?), now: Timestamp,
        decide: @escaping @Sendable (User) throws -> AccountLinking.Decision
    ) async throws -> EmailMatch {
        let tenant = tenantId ?? ""
        do {
            return try await database.withTransaction { transaction in
                let locked = try await transaction.query(
                    "SELECT uid FROM users WHERE tenant_id = \(tenant) AND lower(email) = lower(\(email)) FOR UPDATE",
                    logger: logger)
                var uid: String?
                for try await found in locked.decode(String.self) { uid = found }
                guard let uid, let user = try await Self.read(uid, tenantId: tenantId, in: transaction, logger: logger) else {
                    return .noAccount
                }
                let decision = try decide(user)
                let unlinking: [String]
                let removePassword: Bool
                switch decision {
                case .needConfirmation:
                    return .needConfirmation(user)
                case .link:
                    (unlinking, removePassword) = ([], false)
                case .replace(let providers, let password):
                    (unlinking, removePassword) = (providers, password)
                }
                let replacing = decision != .link
                if !unlinking.isEmpty || removePassword {
                    try await transaction.query(
                        """
                        DELETE FROM user_providers
                        WHERE tenant_id = \(tenant) AND uid = \(user.uid)
                          AND (provider_id = ANY(\(unlinking)) OR (\(removePassword) AND provider_id = \(ProviderLink.password)))
                        """, logger: logger)
                }
                try await insert(link, uid: user.uid, tenant: tenant, in: transaction)
                let updated = try await transaction.query(
                    """
                    UPDATE users SET
                        email_verified = email_verified OR \(provesEmail),
                        password_hash = CASE WHEN \(removePassword) THEN NULL ELSE password_hash END,
                        password_updated_us = CASE WHEN \(removePassword) THEN NULL ELSE password_updated_us END,
                        display_name = CASE WHEN \(replacing) THEN \(profile.displayName) ELSE display_name END,
                        photo_url = CASE WHEN \(replacing) THEN \(profile.photoURL) ELSE photo_url END,
                        valid_since_us = CASE WHEN \(replacing)
                            THEN (greatest(valid_since_us, \(now.microseconds), coalesce(last_login_us, 0)) / 1000000 + 1) * 1000000
                            ELSE valid_since_us END
                    WHERE tenant_id = \(tenant) AND uid = \(user.uid)
                    RETURNING \(unescaped: UserRepository.columns)
                    """, logger: logger)
                // Each statement sees the ones before it: the links read here are the new ones.
                guard let (result, _) = try await UserRepository.decode(updated, tenantId: tenantId).first else {
                    return .noAccount
                }
                if replacing {
                    try await transaction.announce(.user(tenantId: tenantId, uid: user.uid), logger: logger)
                }
                return .linked(result, replaced: replacing)
            }
        } catch is UniqueViolation {
            throw AuthError(.federatedUserIdAlreadyLinked)
        }
    }

    /// Links `link` to the account `uid` (explicit linking). When the account has no email
    /// yet it takes the identity's (`EMAIL_EXISTS` if another account has it), verified when
    /// `provesEmail`. `FEDERATED_USER_ID_ALREADY_LINKED` when another account has the
    /// identity; linking it again to its own account changes nothing.
    ///
    /// - Returns: the account after the change, or `nil` when it is gone or disabled.
    public func link(
        _ link: ProviderLink, to uid: String, tenantId: String?, email: String?, provesEmail: Bool
    ) async throws -> User? {
        let tenant = tenantId ?? ""
        do {
            return try await database.withTransaction { transaction in
                let rows = try await transaction.query(
                    """
                    UPDATE users SET
                        email = coalesce(email, \(email)::text),
                        email_verified = CASE WHEN email IS NULL AND \(email)::text IS NOT NULL THEN \(provesEmail)
                            ELSE email_verified END
                    WHERE tenant_id = \(tenant) AND uid = \(uid) AND NOT disabled
                    RETURNING \(unescaped: UserRepository.columns)
                    """, logger: logger)
                guard var (user, _) = try await UserRepository.decode(rows, tenantId: tenantId).first else { return nil }
                let owners = try await transaction.query(
                    """
                    INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email, display_name, photo_url)
                    VALUES (\(tenant), \(link.providerId), \(link.federatedId), \(uid), \(link.email), \(link.displayName),
                        \(link.photoURL))
                    ON CONFLICT (tenant_id, provider_id, federated_id) DO UPDATE SET uid = user_providers.uid
                    RETURNING uid
                    """, logger: logger)
                for try await owner in owners.decode(String.self) where owner != uid {
                    throw AuthError(.federatedUserIdAlreadyLinked)
                }
                if !user.providers.contains(where: { $0.providerId == link.providerId && $0.federatedId == link.federatedId }) {
                    user.providers.append(link)
                }
                return user
            }
        } catch is UniqueViolation {
            throw AuthError(.emailExists)
        }
    }

    /// Removes the providers named (`password` removes the password too) from the account,
    /// unless `check` refuses the change for the account as locked.
    ///
    /// - Returns: the account after the change, or `nil` when it is gone or disabled.
    public func unlink(
        _ providerIds: Set<String>, from uid: String, tenantId: String?, check: @escaping @Sendable (User) throws -> Void
    ) async throws -> User? {
        let tenant = tenantId ?? ""
        let removed = Array(providerIds)
        return try await database.withTransaction { transaction in
            let locked = try await transaction.query(
                "SELECT 1 FROM users WHERE tenant_id = \(tenant) AND uid = \(uid) AND NOT disabled FOR UPDATE", logger: logger)
            var found = false
            for try await _ in locked { found = true }
            guard found, var user = try await Self.read(uid, tenantId: tenantId, in: transaction, logger: logger) else {
                return nil
            }
            try check(user)
            try await transaction.query(
                "DELETE FROM user_providers WHERE tenant_id = \(tenant) AND uid = \(uid) AND provider_id = ANY(\(removed))",
                logger: logger)
            if providerIds.contains(ProviderLink.password), user.hasPassword {
                try await transaction.query(
                    """
                    UPDATE users SET password_hash = NULL, password_updated_us = NULL
                    WHERE tenant_id = \(tenant) AND uid = \(uid)
                    """, logger: logger)
                user.hasPassword = false
            }
            user.providers.removeAll { providerIds.contains($0.providerId) }
            return user
        }
    }

    /// The user and its links, read after its row lock is held: a statement of its own, so
    /// its snapshot includes every link change committed before the lock was granted (a
    /// statement that waits for a row lock re-reads that row only, not its subqueries).
    private static func read(
        _ uid: String, tenantId: String?, in transaction: Transaction, logger: Logger
    ) async throws -> User? {
        let rows = try await transaction.query(
            "SELECT \(unescaped: UserRepository.columns) FROM users WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid)",
            logger: logger)
        return try await UserRepository.decode(rows, tenantId: tenantId).first?.0
    }

    private func insert(_ link: ProviderLink, uid: String, tenant: String, in transaction: Transaction) async throws {
        try await transaction.query(
            """
            INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email, display_name, photo_url)
            VALUES (\(tenant), \(link.providerId), \(link.federatedId), \(uid), \(link.email), \(link.displayName), \(link.photoURL))
            """, logger: logger)
    }
}
