import Foundation
public import Logging
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// All SQL of the `service_accounts` table: the public keys that verify custom tokens,
/// per tenant (`''` for the project's own). Private keys are never stored.
public struct ServiceAccountRepository: Sendable {
    let database: Database
    let logger: Logger

    /// How many keys one email may find for a token without `kid` (an email with several
    /// keys is a customer rotating its own key; more than this is a mistake, not a need).
    public static let maximumKeysPerEmail = 10

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Stores a service account, audited and announced to every instance in the same
    /// transaction.
    ///
    /// - Parameters:
    ///   - account: the account to store (a public key only).
    ///   - uniqueEmail: store it only if no service account of the tenant has its
    ///     email (for generated emails, whose random part could in principle repeat).
    ///   - actor: who registers it, for the audit record.
    /// - Returns: the stored account, or `nil` when `uniqueEmail` found the email taken.
    /// - Throws: `Conflict.tenantMissing` when its tenant does not exist;
    ///   `Conflict.serviceAccountKeyTaken` when the tenant already has a key with this id.
    public func insert(_ account: ServiceAccount, uniqueEmail: Bool, actor: String) async throws -> ServiceAccount? {
        let tenant = account.scope.key
        return try await database.withTransaction { transaction in
            if !tenant.isEmpty {
                // No foreign key to the tenant (the project's accounts have none): held like one,
                // so nothing is added to a tenant whose deletion committed.
                let exists = try await transaction.query(
                    "SELECT 1 FROM tenants WHERE tenant_id = \(tenant) FOR SHARE", logger: logger)
                var found = false
                for try await _ in exists.decode(Int.self) { found = true }
                guard found else { throw Conflict.tenantMissing }
            }
            let rows = try await transaction.query(
                """
                INSERT INTO service_accounts (tenant_id, key_id, client_email, display_name, public_key)
                SELECT \(tenant), \(account.keyId), \(account.clientEmail), \(account.displayName), \(account.publicKeyPEM)
                WHERE NOT \(uniqueEmail) OR NOT EXISTS (
                    SELECT 1 FROM service_accounts WHERE tenant_id = \(tenant) AND client_email = \(account.clientEmail))
                RETURNING created_at
                """, logger: logger)
            var createdAt: Date?
            for try await created in rows.decode(Date.self) { createdAt = created }
            guard let createdAt else { return nil }
            try await AuditLogRepository.record(
                AuditEntry(
                    tenantId: account.tenantId, actor: actor, action: "serviceAccount.create",
                    target: "serviceAccounts/\(account.keyId)",
                    after: .object([
                        "clientEmail": .string(account.clientEmail),
                        "displayName": account.displayName.map(JSONValue.string) ?? .null,
                    ])),
                in: transaction, logger: logger)
            try await transaction.announce(.serviceAccounts(account.scope), logger: logger)
            return ServiceAccount(
                tenantId: account.tenantId, keyId: account.keyId, clientEmail: account.clientEmail,
                displayName: account.displayName, publicKeyPEM: account.publicKeyPEM, createTime: createdAt)
        }
    }

    /// The tenant's service accounts, newest first.
    public func list(tenant: TenantScope) async throws -> [ServiceAccount] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM service_accounts
                WHERE tenant_id = \(tenant.key) ORDER BY created_at DESC, key_id
                """, logger: logger)
            return try await Self.decode(rows, tenant: tenant)
        }
    }

    /// The tenant's service account whose key has this id, or `nil`.
    public func find(tenant: TenantScope, keyId: String) async throws -> ServiceAccount? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM service_accounts
                WHERE tenant_id = \(tenant.key) AND key_id = \(keyId)
                """, logger: logger)
            return try await Self.decode(rows, tenant: tenant).first
        }
    }

    /// The tenant's service accounts with this email (several keys of one signer), oldest
    /// first, at most ``maximumKeysPerEmail``.
    public func find(tenant: TenantScope, clientEmail: String) async throws -> [ServiceAccount] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM service_accounts
                WHERE tenant_id = \(tenant.key) AND client_email = \(clientEmail)
                ORDER BY created_at, key_id LIMIT \(Self.maximumKeysPerEmail)
                """, logger: logger)
            return try await Self.decode(rows, tenant: tenant)
        }
    }

    /// Deletes a service account, audited and announced in the same transaction; `false`
    /// when the tenant has none with this key id.
    public func delete(tenant: TenantScope, keyId: String, actor: String) async throws -> Bool {
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                DELETE FROM service_accounts WHERE tenant_id = \(tenant.key) AND key_id = \(keyId)
                RETURNING client_email, display_name
                """, logger: logger)
            var before: JSONValue?
            for try await (email, name) in rows.decode((String, String?).self) {
                before = .object(["clientEmail": .string(email), "displayName": name.map(JSONValue.string) ?? .null])
            }
            guard let before else { return false }
            try await AuditLogRepository.record(
                AuditEntry(
                    tenantId: tenant.tenantId, actor: actor, action: "serviceAccount.delete", target: "serviceAccounts/\(keyId)",
                    before: before),
                in: transaction, logger: logger)
            try await transaction.announce(.serviceAccounts(tenant), logger: logger)
            return true
        }
    }

    private static let columns = "key_id, client_email, display_name, public_key, created_at"

    private static func decode(_ rows: PostgresRowSequence, tenant: TenantScope) async throws -> [ServiceAccount] {
        var accounts: [ServiceAccount] = []
        for try await (keyId, email, name, publicKey, created) in rows.decode((String, String, String?, String, Date).self) {
            accounts.append(
                ServiceAccount(
                    tenantId: tenant.tenantId, keyId: keyId, clientEmail: email, displayName: name, publicKeyPEM: publicKey,
                    createTime: created))
        }
        return accounts
    }
}
