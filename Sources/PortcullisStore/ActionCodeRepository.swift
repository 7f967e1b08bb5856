import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// All SQL of `action_codes`. Issuing a code writes its outbox message in the same
/// transaction; applying one consumes it and changes its user in the same transaction.
public struct ActionCodeRepository: Sendable {
    let database: Database
    let users: UserRepository
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, users: UserRepository, logger: Logger) {
        self.database = database
        self.users = users
        self.logger = logger
    }

    /// How far back ``issue(_:codeHash:now:message:floodLimit:floodError:audit:)``'s flood
    /// limit counts a user's codes: one hour.
    static let floodWindowMicroseconds: Int64 = 3_600_000_000

    /// Stores a code and, when given, the message that delivers it, in one transaction.
    ///
    /// The user row is held `FOR SHARE` meanwhile, so the flood count is per user in order
    /// and a deletion waits (or came first: `USER_NOT_FOUND`, nothing written). The code is
    /// bound to the user as the lock finds it: its issue time is `now` or, inside the second
    /// a revocation covers, that revocation's watermark (so a revocation committed before
    /// it spares it and any later one kills it), and its account email is the user's email.
    /// The `issuedAt` and `accountEmail` of `code` are not read.
    /// - Parameters:
    ///   - code: what the code is for: tenant, user, kind, address, expiry.
    ///   - codeHash: SHA-256 of the code.
    ///   - now: when it is issued.
    ///   - message: the sealed outbox entry, or `nil` when an admin takes the link instead.
    ///   - floodLimit: the most codes of this kind the user may have been issued in the hour
    ///     before `now`; over it, `floodError` is thrown and nothing is written.
    ///   - floodError: the error for a user over `floodLimit` (it depends on the kind).
    ///   - audit: the entry recording the issue (never the code).
    public func issue(
        _ code: ActionCode, codeHash: [UInt8], now: Timestamp, message: OutboxEntry?, floodLimit: Int,
        floodError: AuthError, audit: AuditEntry
    ) async throws {
        let tenant = code.tenantId ?? ""
        try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                SELECT (SELECT count(*) FROM action_codes c
                        WHERE c.tenant_id = u.tenant_id AND c.uid = u.uid AND c.kind = \(code.kind.rawValue)
                          AND c.created_us > \(now.microseconds - Self.floodWindowMicroseconds)),
                    greatest(u.valid_since_us, \(now.microseconds)), u.email
                FROM users u WHERE u.tenant_id = \(tenant) AND u.uid = \(code.uid) FOR SHARE OF u
                """, logger: logger)
            var found: (recent: Int64, issuedAt: Int64, accountEmail: String?)?
            for try await row in rows.decode((Int64, Int64, String?).self) { found = row }
            guard let found else { throw AuthError(.userNotFound) }
            guard found.recent < floodLimit else { throw floodError }
            try await transaction.query(
                """
                INSERT INTO action_codes (tenant_id, code_hash, uid, kind, email, account_email, continue_url, created_us,
                    expires_us)
                VALUES (\(tenant), \(ByteBuffer(bytes: codeHash)), \(code.uid), \(code.kind.rawValue), \(code.email),
                        \(found.accountEmail), \(code.continueURL), \(found.issuedAt), \(code.expiresAt.microseconds))
                """, logger: logger)
            if let message { try await EmailOutboxRepository.enqueue(message, in: transaction, logger: logger) }
            try await AuditLogRepository.record(audit, in: transaction, logger: logger)
        }
    }

    /// The unused code with this hash, without using it; `INVALID_OOB_CODE` when unknown or
    /// used, `EXPIRED_OOB_CODE` when past its expiry.
    public func find(tenantId: String?, codeHash: [UInt8], now: Timestamp) async throws -> ActionCode {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT uid, kind, email, continue_url, expires_us, created_us, account_email FROM action_codes
                WHERE tenant_id = \(tenantId ?? "") AND code_hash = \(ByteBuffer(bytes: codeHash)) AND used_us IS NULL
                """, logger: logger)
            return try await Self.live(rows, tenantId: tenantId, now: now)
        }
    }

    /// Uses the code and applies `change` to its user, in one transaction: the code is spent
    /// exactly when the change is written. The user row is locked before `change` reads it.
    ///
    /// - Parameters:
    ///   - tenantId: the tenant, `nil` for project users.
    ///   - codeHash: SHA-256 of the presented code.
    ///   - kinds: the kinds this operation applies; any other is `INVALID_OOB_CODE`, unspent.
    ///   - now: when it is used: an expired code is `EXPIRED_OOB_CODE`, unspent.
    ///   - change: the update to make, decided from the code and the locked user (throwing
    ///     leaves the code unspent).
    ///   - audit: the entry recording the use (never the code).
    /// - Returns: the code and the user as stored afterwards.
    public func consume(
        tenantId: String?, codeHash: [UInt8], kinds: Set<EmailActionKind>, now: Timestamp,
        change: @escaping @Sendable (ActionCode, User) throws -> UserUpdate, audit: @escaping @Sendable (ActionCode) -> AuditEntry
    ) async throws -> (ActionCode, User) {
        let tenant = tenantId ?? ""
        do {
            return try await database.withTransaction { transaction in
                let rows = try await transaction.query(
                    """
                    UPDATE action_codes SET used_us = \(now.microseconds)
                    WHERE tenant_id = \(tenant) AND code_hash = \(ByteBuffer(bytes: codeHash)) AND used_us IS NULL
                      AND kind = ANY(\(kinds.map(\.rawValue)))
                    RETURNING uid, kind, email, continue_url, expires_us, created_us, account_email
                    """, logger: logger)
                let code = try await Self.live(rows, tenantId: tenantId, now: now)
                // A code outliving its user (issued as the user was deleted) proves nothing.
                guard let user = try await users.lockedUser(tenantId: tenantId, uid: code.uid, in: transaction) else {
                    throw AuthError(.invalidOobCode)
                }
                let update = try change(code, user)
                guard let updated = try await users.update(tenantId: tenantId, uid: code.uid, update, requiring: .none, in: transaction)
                else { throw AuthError(.invalidOobCode) }
                try await AuditLogRepository.record(audit(code), in: transaction, logger: logger)
                return (code, updated)
            }
        } catch is UniqueViolation {
            throw AuthError(.emailExists)
        }
    }

    /// Deletes up to `limit` codes spent (used or expired) before `spentBefore`, across
    /// tenants; rows another instance's sweep holds are skipped.
    ///
    /// A code still inside the flood limit's window is kept whatever its state, so deleting
    /// never lets a user be sent more messages than the limit allows.
    /// - Returns: how many were deleted.
    public func deleteSpentCodes(before spentBefore: Timestamp, now: Timestamp, limit: Int) async throws -> Int {
        try await database.changedRows(
            """
            WITH spent AS (
                SELECT tenant_id, code_hash FROM action_codes
                WHERE (expires_us < \(spentBefore.microseconds) OR used_us < \(spentBefore.microseconds))
                  AND created_us <= \(now.microseconds - Self.floodWindowMicroseconds)
                LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            DELETE FROM action_codes a USING spent
            WHERE a.tenant_id = spent.tenant_id AND a.code_hash = spent.code_hash
            RETURNING 1
            """, logger: logger)
    }

    /// The one code in `rows`, live at `now`.
    private static func live(_ rows: PostgresRowSequence, tenantId: String?, now: Timestamp) async throws -> ActionCode {
        var found: ActionCode?
        for try await (uid, kind, email, continueURL, expires, created, accountEmail) in rows.decode(
            (String, String, String, String?, Int64, Int64, String?).self)
        {
            guard let kind = EmailActionKind(rawValue: kind) else { continue }
            found = ActionCode(
                tenantId: tenantId, uid: uid, kind: kind, email: email, continueURL: continueURL,
                expiresAt: Timestamp(microseconds: expires), issuedAt: Timestamp(microseconds: created),
                accountEmail: accountEmail)
        }
        guard let found else { throw AuthError(.invalidOobCode) }
        guard now < found.expiresAt else { throw AuthError(.expiredOobCode) }
        return found
    }
}
