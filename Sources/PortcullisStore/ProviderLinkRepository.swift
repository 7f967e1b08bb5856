import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// All SQL of federated identities (`user_providers` rows other than `password`): finding
/// the account an identity signs in to, linking and unlinking. Links change inside the
/// caller's transaction, after it has locked the account (``UserRepository/lock(tenant:uid:requiring:in:)``),
/// so what it decided holds for the account as it is when the change lands.
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
        tenant: TenantScope, providerId: String, federatedId: String
    ) async throws -> (user: User, link: ProviderLink)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: UserRepository.qualifiedColumns)
                FROM user_providers link JOIN users ON users.tenant_id = link.tenant_id AND users.uid = link.uid
                WHERE link.tenant_id = \(tenant.key) AND link.provider_id = \(providerId)
                  AND link.federated_id = \(federatedId)
                """, logger: logger)
            guard let (user, _) = try await UserRepository.decode(rows, tenant: tenant).first,
                let link = user.providers.first(where: { $0.providerId == providerId && $0.federatedId == federatedId })
            else { return nil }
            return (user, link)
        }
    }

    /// Brings a link's copy of the provider's profile up to date (the provider's email,
    /// name and picture as of this sign-in).
    public func refresh(_ link: ProviderLink, tenant: TenantScope) async throws {
        _ = try await database.withTransaction { transaction in
            try await transaction.query(
                """
                UPDATE user_providers SET email = \(link.email), display_name = \(link.displayName), photo_url = \(link.photoURL)
                WHERE tenant_id = \(tenant.key) AND provider_id = \(link.providerId) AND federated_id = \(link.federatedId)
                """, logger: logger)
        }
    }

    /// Links `link` to the account `uid` in `transaction`, or refreshes its profile copy when it
    /// is that account's already; `Conflict.identityLinked` when another account has it.
    ///
    /// The one insert of a federated link (sign-up and import insert theirs with the user).
    public func link(_ link: ProviderLink, to uid: String, tenant: TenantScope, in transaction: Transaction) async throws {
        let owners = try await transaction.query(
            """
            INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email, display_name, photo_url)
            VALUES (\(tenant.key), \(link.providerId), \(link.federatedId), \(uid), \(link.email), \(link.displayName),
                \(link.photoURL))
            ON CONFLICT (tenant_id, provider_id, federated_id) DO UPDATE
                SET email = EXCLUDED.email, display_name = EXCLUDED.display_name, photo_url = EXCLUDED.photo_url
                WHERE user_providers.uid = EXCLUDED.uid
            RETURNING uid
            """, logger: logger)
        var linked = false
        for try await _ in owners { linked = true }
        guard linked else { throw Conflict.identityLinked }
    }

    /// Removes the links of the providers named from the account `uid`, in `transaction`
    /// (the password itself is a `UserUpdate`'s to remove).
    public func unlink(_ providerIds: Set<String>, from uid: String, tenant: TenantScope, in transaction: Transaction) async throws {
        guard !providerIds.isEmpty else { return }
        try await transaction.query(
            """
            DELETE FROM user_providers
            WHERE tenant_id = \(tenant.key) AND uid = \(uid) AND provider_id = ANY(\(Array(providerIds)))
            """, logger: logger)
    }
}
