import Foundation
import Logging
public import PortcullisCore
import PostgresNIO

/// The `users` SQL of the admin API: audited changes (each in one transaction with its
/// audit row), lookups by several identifiers, keyset pages, queries and bulk deletion.
extension UserRepository {
    /// A federated identity named by `accounts:lookup`'s `federatedUserId[]`.
    public struct FederatedUserId: Sendable, Hashable {
        /// `google.com`, `oidc.<name>`, …
        public var providerId: String
        /// The account's id at the provider.
        public var rawId: String

        /// An identity.
        public init(providerId: String, rawId: String) {
            self.providerId = providerId
            self.rawId = rawId
        }
    }

    /// What a bulk deletion did.
    public struct BulkDeletion: Sendable, Equatable {
        /// The uids deleted.
        public var deleted: Set<String>
        /// The uids kept because they are not disabled (only without `force`).
        public var notDisabled: Set<String>
    }

    /// ``create(_:passwordHash:)`` with its audit row (`user.create`, by `actor`) in one transaction.
    public func create(_ user: User, passwordHash: String?, actor: String) async throws -> User {
        do {
            return try await database.withTransaction { connection in
                let created = try await insert(user, passwordHash: passwordHash, on: connection)
                try await AuditLogRepository.record(
                    Self.audit(created, actor: actor, action: "user.create", after: Self.auditRecord(created)), on: connection,
                    logger: logger)
                return created
            }
        } catch let violation as UniqueViolation {
            throw Self.creationConflict(violation)
        }
    }

    /// An administrator's change to one account, in one transaction with its audit row
    /// (`user.update`, the account before and after; never a password or its hash).
    ///
    /// The account's row lock is taken first. Then the providers in `unlinking` are removed
    /// (`password` removes the password too), `update` assigns exactly the fields it sets
    /// (as ``update(tenantId:uid:_:requiring:)``), the `password` link follows the email and
    /// password, and `linking` is linked, or its profile copy refreshed when it is this
    /// account's already. `EMAIL_EXISTS` when the new email is another account's,
    /// `FEDERATED_USER_ID_ALREADY_LINKED` when `linking` is.
    ///
    /// - Parameter fields: the request's fields, recorded in the audit row (`updatedFields`).
    /// - Returns: the account after the change, or `nil` when there is no such account.
    public func update(
        tenantId: String?, uid: String, _ update: UserUpdate, unlinking: Set<String>, linking: ProviderLink?, actor: String,
        fields: [String]
    ) async throws -> User? {
        let tenant = tenantId ?? ""
        do {
            return try await database.withTransaction { connection in
                let locked = try await connection.query(
                    "SELECT 1 FROM users WHERE tenant_id = \(tenant) AND uid = \(uid) FOR UPDATE", logger: logger)
                var found = false
                for try await _ in locked { found = true }
                // Read in a statement of its own, after the lock: it sees every link committed before.
                guard found, let before = try await Self.read(uid, tenantId: tenantId, on: connection, logger: logger) else {
                    return nil
                }
                if !unlinking.isEmpty {
                    try await connection.query(
                        """
                        DELETE FROM user_providers
                        WHERE tenant_id = \(tenant) AND uid = \(uid) AND provider_id = ANY(\(Array(unlinking)))
                        """, logger: logger)
                    if unlinking.contains(ProviderLink.password) {
                        try await connection.query(
                            "UPDATE users SET password_hash = NULL WHERE tenant_id = \(tenant) AND uid = \(uid)", logger: logger)
                    }
                }
                let rows = try await connection.query(
                    Self.updateStatement(tenantId: tenantId, uid: uid, update, requiring: .none), logger: logger)
                guard var (user, _) = try await Self.decode(rows, tenantId: tenantId).first else { return nil }
                if update.changesPasswordLink {
                    user.syncPasswordLink()
                    try await syncPasswordLink(of: user, on: connection)
                }
                if let linking {
                    try await link(linking, to: uid, tenant: tenant, on: connection)
                }
                // Each statement sees the ones before it: this is the account as the change leaves it.
                guard let after = try await Self.read(uid, tenantId: tenantId, on: connection, logger: logger) else { return nil }
                if update.changesRevocationState {
                    try await InvalidationEvent.user(tenantId: tenantId, uid: uid).send(on: connection, logger: logger)
                }
                var record = Self.auditRecord(after)
                if case .object(var members) = record {
                    members["updatedFields"] = .array(fields.sorted().map(JSONValue.string))
                    record = .object(members)
                }
                try await AuditLogRepository.record(
                    Self.audit(after, actor: actor, action: "user.update", before: Self.auditRecord(before), after: record),
                    on: connection, logger: logger)
                return after
            }
        } catch let violation as UniqueViolation {
            throw violation.constraint == "users_email_unique"
                ? AuthError(.emailExists) : AuthError(.federatedUserIdAlreadyLinked)
        }
    }

    /// Links `link` to `uid`, or refreshes the profile copy when it is `uid`'s already;
    /// `FEDERATED_USER_ID_ALREADY_LINKED` when another account has it.
    private func link(_ link: ProviderLink, to uid: String, tenant: String, on connection: PostgresConnection) async throws {
        let owners = try await connection.query(
            """
            INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email, display_name, photo_url)
            VALUES (\(tenant), \(link.providerId), \(link.federatedId), \(uid), \(link.email), \(link.displayName),
                \(link.photoURL))
            ON CONFLICT (tenant_id, provider_id, federated_id) DO UPDATE
                SET email = EXCLUDED.email, display_name = EXCLUDED.display_name, photo_url = EXCLUDED.photo_url
                WHERE user_providers.uid = EXCLUDED.uid
            RETURNING uid
            """, logger: logger)
        var linked = false
        for try await _ in owners { linked = true }
        guard linked else { throw AuthError(.federatedUserIdAlreadyLinked) }
    }

    /// Deletes the account, its sessions and action codes, with an audit row (`user.delete`, the account
    /// as it was); `false` when absent. Sessions go first, as in ``delete(tenantId:uid:)``.
    public func delete(tenantId: String?, uid: String, actor: String) async throws -> Bool {
        let tenant = tenantId ?? ""
        return try await database.withTransaction { connection in
            try await connection.query(
                "DELETE FROM refresh_sessions WHERE tenant_id = \(tenant) AND uid = \(uid)", logger: logger)
            try await connection.query("DELETE FROM action_codes WHERE tenant_id = \(tenant) AND uid = \(uid)", logger: logger)
            let rows = try await connection.query(
                "DELETE FROM users WHERE tenant_id = \(tenant) AND uid = \(uid) RETURNING \(unescaped: Self.columns)",
                logger: logger)
            guard let (user, _) = try await Self.decode(rows, tenantId: tenantId).first else { return false }
            try await InvalidationEvent.user(tenantId: tenantId, uid: uid).send(on: connection, logger: logger)
            try await AuditLogRepository.record(
                Self.audit(user, actor: actor, action: "user.delete", before: Self.auditRecord(user)), on: connection,
                logger: logger)
            return true
        }
    }

    /// Deletes the named accounts that exist and are disabled (any that exist, with `force`),
    /// with their sessions, in one transaction with a `user.delete` audit row each.
    ///
    /// The accounts to delete are chosen first, then their sessions go, then the accounts
    /// (the order a refresh locks them in). An account disabled meanwhile stays (and is
    /// reported), one enabled meanwhile is kept without `force`.
    public func delete(tenantId: String?, uids: [String], force: Bool, actor: String) async throws -> BulkDeletion {
        let tenant = tenantId ?? ""
        return try await database.withTransaction { connection in
            let chosen = try await connection.query(
                """
                SELECT uid FROM users WHERE tenant_id = \(tenant) AND uid = ANY(\(uids)) AND (\(force) OR disabled)
                """, logger: logger)
            var targets: [String] = []
            for try await uid in chosen.decode(String.self) { targets.append(uid) }
            try await connection.query(
                "DELETE FROM refresh_sessions WHERE tenant_id = \(tenant) AND uid = ANY(\(targets))", logger: logger)
            try await connection.query(
                "DELETE FROM action_codes WHERE tenant_id = \(tenant) AND uid = ANY(\(targets))", logger: logger)
            let rows = try await connection.query(
                """
                DELETE FROM users WHERE tenant_id = \(tenant) AND uid = ANY(\(targets)) AND (\(force) OR disabled)
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            let deleted = try await Self.decode(rows, tenantId: tenantId).map(\.0)
            var kept: Set<String> = []
            if !force {
                let remaining = try await connection.query(
                    "SELECT uid FROM users WHERE tenant_id = \(tenant) AND uid = ANY(\(uids))", logger: logger)
                for try await uid in remaining.decode(String.self) { kept.insert(uid) }
            }
            try await InvalidationEvent.send(
                deleted.map { InvalidationEvent.user(tenantId: tenantId, uid: $0.uid) }, on: connection, logger: logger)
            try await AuditLogRepository.record(
                deleted.map { Self.audit($0, actor: actor, action: "user.delete", before: Self.auditRecord($0)) },
                on: connection, logger: logger)
            return BulkDeletion(deleted: Set(deleted.map(\.uid)), notDisabled: kept)
        }
    }

    /// The accounts any of the identifiers name, each once, ordered by uid. Emails match
    /// case-insensitively; identities by provider and raw id.
    public func lookup(
        tenantId: String?, uids: [String], emails: [String], federatedIds: [FederatedUserId]
    ) async throws -> [User] {
        let tenant = tenantId ?? ""
        let lowered = emails.map { $0.lowercased() }
        return try await database.withConnection { connection in
            // Three index lookups (primary key, email index, provider key) united, then the rows.
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM users
                WHERE tenant_id = \(tenant) AND uid IN (
                    SELECT unnest(\(uids)::text[])
                    UNION
                    SELECT u.uid FROM users u
                    WHERE u.tenant_id = \(tenant) AND u.email IS NOT NULL AND lower(u.email) = ANY(\(lowered)::text[])
                    UNION
                    SELECT p.uid FROM user_providers p
                    JOIN unnest(\(federatedIds.map(\.providerId))::text[], \(federatedIds.map(\.rawId))::text[])
                        AS f(provider_id, federated_id)
                        ON p.provider_id = f.provider_id AND p.federated_id = f.federated_id
                    WHERE p.tenant_id = \(tenant))
                ORDER BY uid
                """, logger: logger)
            return try await Self.decode(rows, tenantId: tenantId).map(\.0)
        }
    }

    /// Up to `limit` accounts with uids after `after` (from the first when `nil`), in uid order:
    /// a keyset page on the primary key, so each account appears on exactly one page however
    /// many are created or deleted between pages.
    public func page(tenantId: String?, after: String?, limit: Int) async throws -> [User] {
        try await pageWithPasswordHashes(tenantId: tenantId, after: after, limit: limit).map(\.user)
    }

    /// ``page(tenantId:after:limit:)`` with each account's stored password hash: for
    /// `portcullis users export`, which hands them to the operator, never to an API answer.
    public func pageWithPasswordHashes(
        tenantId: String?, after: String?, limit: Int
    ) async throws -> [(user: User, passwordHash: String?)] {
        let tenant = tenantId ?? ""
        return try await database.withConnection { connection in
            // The first page is the keyset statement too (every uid is greater than ''): on its
            // own, `ORDER BY uid LIMIT n` got a generic plan that sorted the whole tenant (the
            // pool forces generic plans), 160–260 ms with 1,000,000 users against 25 ms.
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM users WHERE tenant_id = \(tenant) AND uid > \(after ?? "")
                ORDER BY uid LIMIT \(limit)
                """, logger: logger)
            return try await Self.decode(rows, tenantId: tenantId).map { (user: $0.0, passwordHash: $0.1) }
        }
    }

    /// The accounts `query` selects, sorted and sliced as it says (`accounts:query`).
    public func search(tenantId: String?, _ query: UserQuery) async throws -> [User] {
        let tenant = tenantId ?? ""
        let (uid, email, nobody) = Self.filterValues(query.filter)
        return try await database.withConnection { connection in
            // Each filter is a bound value; the planner drops the conditions whose value is NULL.
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM users
                WHERE tenant_id = \(tenant) AND NOT \(nobody)
                  AND (\(uid)::text IS NULL OR uid = \(uid))
                  AND (\(email)::text IS NULL OR (email IS NOT NULL AND lower(email) = \(email)))
                ORDER BY \(unescaped: Self.orderSQL(query))
                LIMIT \(query.limit) OFFSET \(query.offset)
                """, logger: logger)
            return try await Self.decode(rows, tenantId: tenantId).map(\.0)
        }
    }

    /// How many accounts `filter` selects (`accounts:query` with `returnUserInfo: false`).
    public func count(tenantId: String?, _ filter: UserQuery.Filter) async throws -> Int64 {
        let tenant = tenantId ?? ""
        let (uid, email, nobody) = Self.filterValues(filter)
        return try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT count(*) FROM users
                WHERE tenant_id = \(tenant) AND NOT \(nobody)
                  AND (\(uid)::text IS NULL OR uid = \(uid))
                  AND (\(email)::text IS NULL OR (email IS NOT NULL AND lower(email) = \(email)))
                """, logger: logger)
            for try await count in rows.decode(Int64.self) { return count }
            return 0
        }
    }

    private static func filterValues(_ filter: UserQuery.Filter) -> (uid: String?, email: String?, nobody: Bool) {
        switch filter {
        case .all: (nil, nil, false)
        case .uid(let uid): (uid, nil, false)
        case .email(let email): (nil, email, false)
        case .nobody: (nil, nil, true)
        }
    }

    /// The `ORDER BY` of a query, from fixed fragments only; the uid breaks ties, so the order is total.
    static func orderSQL(_ query: UserQuery) -> String {
        let direction = query.descending ? "DESC" : "ASC"
        let key: String? =
            switch query.sortBy {
            case .userId: nil
            case .name: "display_name"
            case .createdAt: "created_at"
            case .lastLoginAt: "last_login_us"
            case .email: "lower(email)"
            }
        guard let key else { return "uid \(direction)" }
        return "\(key) \(direction) NULLS LAST, uid \(direction)"
    }

    /// The account as stored, read on `connection`.
    static func read(_ uid: String, tenantId: String?, on connection: PostgresConnection, logger: Logger) async throws -> User? {
        let rows = try await connection.query(
            "SELECT \(unescaped: columns) FROM users WHERE tenant_id = \(tenantId ?? "") AND uid = \(uid)", logger: logger)
        return try await decode(rows, tenantId: tenantId).first?.0
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
