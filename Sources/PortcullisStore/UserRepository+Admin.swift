import Foundation
import Logging
public import PortcullisCore
import PortcullisJSON
import PostgresNIO

/// The `users` SQL of the admin API's audited changes to one account (each in one
/// transaction with its audit row), and the audit rows themselves.
extension UserRepository {
    /// Inserts a user as ``create(_:passwordHash:firstSession:)`` does, without a session, and
    /// its audit row (`user.create`, by `actor`), in one transaction.
    public func create(_ user: User, passwordHash: String?, actor: String) async throws -> User {
        try await database.withTransaction { transaction in
            let created = try await insert(user, passwordHash: passwordHash, in: transaction)
            try await AuditLogRepository.record(
                Self.audit(created, actor: actor, action: "user.create", after: Self.auditRecord(created)), in: transaction,
                logger: logger)
            return created
        }
    }

    /// An administrator's change to one account, in one transaction with its audit row
    /// (`user.update`, the account before and after; never a password or its hash).
    ///
    /// The account's row lock is taken first. Then the providers in `unlinking` lose their
    /// links, `update` assigns exactly the fields it sets (as ``update(tenant:uid:_:requiring:in:)``:
    /// a password it removes takes its link along), and `linking` is linked, or its profile
    /// copy refreshed when it is this account's already. `Conflict.emailTaken` when the new
    /// email is another account's, `Conflict.identityLinked` when `linking` is.
    ///
    /// - Parameters:
    /// - tenant: the tenant, or the project's users.
    ///   - uid: the account.
    ///   - update: the fields to assign.
    ///   - unlinking: provider ids whose links to remove.
    ///   - linking: a provider identity to link, or whose profile copy to refresh.
    ///   - actor: who changes it, for the audit row.
    ///   - fields: the request's fields, recorded in the audit row (`updatedFields`).
    /// - Returns: the account after the change, or `nil` when there is no such account.
    public func update(
        tenant: TenantScope, uid: String, _ update: UserUpdate, unlinking: Set<String>, linking: ProviderLink?, actor: String,
        fields: [String]
    ) async throws -> User? {
        let links = ProviderLinkRepository(database: database, logger: logger)
        return try await database.withTransaction { transaction in
            guard let before = try await lock(tenant: tenant, uid: uid, in: transaction) else { return nil }
            try await links.unlink(unlinking, from: uid, tenant: tenant, in: transaction)
            guard try await self.update(tenant: tenant, uid: uid, update, requiring: .none, in: transaction) != nil else {
                return nil
            }
            if let linking { try await links.link(linking, to: uid, tenant: tenant, in: transaction) }
            // Each statement sees the ones before it: this is the account as the change leaves it.
            guard let after = try await Self.read(uid, tenant: tenant, in: transaction, logger: logger) else { return nil }
            var record = Self.auditRecord(after)
            if case .object(var members) = record {
                members["updatedFields"] = .array(fields.sorted().map(JSONValue.string))
                record = .object(members)
            }
            try await AuditLogRepository.record(
                Self.audit(after, actor: actor, action: "user.update", before: Self.auditRecord(before), after: record),
                in: transaction, logger: logger)
            return after
        }
    }

    /// Deletes the account, its sessions and action codes, with an audit row (`user.delete`, the account
    /// as it was); `false` when absent. Sessions go first, as in ``delete(tenant:uid:)``.
    public func delete(tenant: TenantScope, uid: String, actor: String) async throws -> Bool {
        return try await database.withTransaction { transaction in
            try await transaction.query(
                "DELETE FROM refresh_sessions WHERE tenant_id = \(tenant.key) AND uid = \(uid)", logger: logger)
            try await transaction.query("DELETE FROM action_codes WHERE tenant_id = \(tenant.key) AND uid = \(uid)", logger: logger)
            let rows = try await transaction.query(
                "DELETE FROM users WHERE tenant_id = \(tenant.key) AND uid = \(uid) RETURNING \(unescaped: Self.columns)",
                logger: logger)
            guard let (user, _) = try await Self.decode(rows, tenant: tenant).first else { return false }
            try await transaction.announce(.user(tenant, uid: uid), logger: logger)
            try await AuditLogRepository.record(
                Self.audit(user, actor: actor, action: "user.delete", before: Self.auditRecord(user)), in: transaction,
                logger: logger)
            return true
        }
    }

    /// An audit entry about `user` (target `users/<uid>`).
    static func audit(
        _ user: User, actor: String, action: String, before: JSONValue? = nil, after: JSONValue? = nil
    ) -> AuditEntry {
        AuditEntry(tenantId: user.tenantId, actor: actor, action: action, target: "users/\(user.uid)", before: before, after: after)
    }

    /// What the audit log keeps of an account: its profile, flags, claims, watermark and
    /// provider ids. Never the password hash (only whether there is a password).
    static func auditRecord(_ user: User) -> JSONValue {
        var members: [String: JSONValue] = [
            "localId": .string(user.uid), "emailVerified": .bool(user.emailVerified), "disabled": .bool(user.disabled),
            "passwordSet": .bool(user.hasPassword), "validSince": .string(String(user.validSince.seconds)),
            "providerIds": .array(user.providerIds.map(JSONValue.string)),
        ]
        if let email = user.email { members["email"] = .string(email) }
        if let name = user.displayName { members["displayName"] = .string(name) }
        if let photo = user.photoURL { members["photoUrl"] = .string(photo) }
        if !user.customAttributes.isEmpty { members["customAttributes"] = .object(user.customAttributes) }
        return .object(members)
    }
}
