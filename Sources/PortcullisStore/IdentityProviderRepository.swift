import Foundation
public import Logging
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// All SQL of the `identity_providers` table: one row per (tenant, provider); `''` is the
/// project's own users. Every write is audited (without the client secret) and notifies
/// every instance's ``IdentityProviderCache`` in its own transaction.
public struct IdentityProviderRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    private static let columns =
        """
        provider_id, display_name, enabled, client_id, client_ids::text, issuer, jwks_uri, user_info_uri, client_secret,
        revocation_uri
        """

    /// Every provider configured for the tenant, ordered by id.
    public func list(tenant: TenantScope) async throws -> [IdentityProvider] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM identity_providers
                WHERE tenant_id = \(tenant.key) ORDER BY provider_id
                """, logger: logger)
            return try await Self.decode(rows)
        }
    }

    /// Stores a new configuration: `CONFIGURATION_EXISTS` when the provider has one already,
    /// `Conflict.tenantMissing` when the tenant is gone (its row is held `FOR SHARE`, as a user's
    /// creation does, so a concurrent deletion either waits and takes this row along or came first).
    public func create(_ provider: IdentityProvider, tenant: TenantScope, actor: String) async throws {
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                WITH tenant AS (SELECT 1 FROM tenants WHERE tenant_id = \(tenant.key) FOR SHARE)
                INSERT INTO identity_providers (tenant_id, provider_id, display_name, enabled, client_id, client_ids,
                    issuer, jwks_uri, user_info_uri, client_secret, revocation_uri)
                SELECT \(tenant.key), \(provider.providerId), \(provider.displayName), \(provider.enabled), \(provider.clientId),
                    \(JSONValue.array(provider.clientIds.map(JSONValue.string)).serialized())::jsonb, \(provider.issuer),
                    \(provider.jwksURI), \(provider.userInfoURI), \(provider.clientSecret), \(provider.revocationURI)
                WHERE \(tenant.key) = '' OR EXISTS (SELECT 1 FROM tenant)
                RETURNING provider_id
                """, logger: logger)
            var inserted = false
            for try await _ in rows { inserted = true }
            guard inserted else { throw Conflict.tenantMissing }
            try await record("idp.create", provider.providerId, tenant: tenant, actor: actor, after: provider, in: transaction)
        }
    }

    /// Applies `change` to the stored configuration under its row lock; `nil` when absent.
    public func update(
        tenant: TenantScope, providerId: String, actor: String,
        change: @escaping @Sendable (IdentityProvider) throws -> IdentityProvider
    ) async throws -> IdentityProvider? {
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                SELECT \(unescaped: Self.columns) FROM identity_providers
                WHERE tenant_id = \(tenant.key) AND provider_id = \(providerId) FOR UPDATE
                """, logger: logger)
            guard let before = try await Self.decode(rows).first else { return nil }
            let after = try change(before)
            // `updated_at` is the row's own bookkeeping, on the database's clock like `created_at`.
            try await transaction.query(
                """
                UPDATE identity_providers SET display_name = \(after.displayName), enabled = \(after.enabled),
                    client_id = \(after.clientId),
                    client_ids = \(JSONValue.array(after.clientIds.map(JSONValue.string)).serialized())::jsonb,
                    issuer = \(after.issuer), jwks_uri = \(after.jwksURI), user_info_uri = \(after.userInfoURI),
                    client_secret = \(after.clientSecret), revocation_uri = \(after.revocationURI), updated_at = now()
                WHERE tenant_id = \(tenant.key) AND provider_id = \(providerId)
                """, logger: logger)
            try await record("idp.update", providerId, tenant: tenant, actor: actor, before: before, after: after, in: transaction)
            return after
        }
    }

    /// Deletes the configuration; `false` when there was none.
    public func delete(tenant: TenantScope, providerId: String, actor: String) async throws -> Bool {
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                DELETE FROM identity_providers WHERE tenant_id = \(tenant.key) AND provider_id = \(providerId)
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            guard let before = try await Self.decode(rows).first else { return false }
            try await record("idp.delete", providerId, tenant: tenant, actor: actor, before: before, in: transaction)
            return true
        }
    }

    /// Audits a change (never with the secret) and tells every instance's cache.
    private func record(
        _ action: String, _ providerId: String, tenant: TenantScope, actor: String, before: IdentityProvider? = nil,
        after: IdentityProvider? = nil, in transaction: Transaction
    ) async throws {
        let target = (tenant.tenantId.map { "tenants/\($0)/" } ?? "") + "idpConfigs/\(providerId)"
        try await AuditLogRepository.record(
            AuditEntry(
                tenantId: tenant.tenantId, actor: actor, action: action, target: target, before: before?.auditDocument,
                after: after?.auditDocument),
            in: transaction, logger: logger)
        try await transaction.announce(.identityProviders(tenant), logger: logger)
    }

    private static func decode(_ rows: PostgresRowSequence) async throws -> [IdentityProvider] {
        var providers: [IdentityProvider] = []
        for try await (id, name, enabled, clientId, clientIds, issuer, jwks, userInfo, secret, revocation) in rows.decode(
            (String, String?, Bool, String, String, String?, String?, String?, String?, String?).self)
        {
            let audiences: [String]
            if case .array(let items) = try JSONValue.parse(Array(clientIds.utf8)) {
                audiences = items.compactMap { if case .string(let text) = $0 { text } else { nil } }
            } else {
                audiences = []
            }
            providers.append(
                IdentityProvider(
                    providerId: id, displayName: name, enabled: enabled, clientId: clientId, clientIds: audiences,
                    issuer: issuer, jwksURI: jwks, userInfoURI: userInfo, clientSecret: secret, revocationURI: revocation))
        }
        return providers
    }
}
