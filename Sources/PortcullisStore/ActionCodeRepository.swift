import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// All SQL of `action_codes`. Issuing a code (with its outbox message) and applying one
/// (with the change to its user) are each one transaction of the caller's.
public struct ActionCodeRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// How far back ``lockIssuer(tenant:uid:kind:now:in:)`` counts a user's codes: one hour.
    static let floodWindowMicroseconds: Int64 = 3_600_000_000

    /// What issuing a code to a user needs to know, read under the user's row lock.
    public struct Issuer: Sendable, Equatable {
        /// Codes of the kind issued to the user in the hour before now (the flood limit's count).
        public let recentCodes: Int
        /// When a code issued now counts as issued: now or, inside the second a revocation
        /// covers, that revocation's watermark (a revocation committed before the code spares
        /// it, any later one kills it).
        public let issuedAt: Timestamp
        /// The account's email as the lock finds it: the code works only while it stays so.
        public let accountEmail: String?
    }

    /// Holds the user row `FOR SHARE` in `transaction` (so counts per user come in order and a
    /// deletion waits, or came first) and reads what issuing a `kind` code at `now` needs;
    /// `nil` when the user is gone.
    public func lockIssuer(
        tenant: TenantScope, uid: String, kind: EmailActionKind, now: Timestamp, in transaction: Transaction
    ) async throws -> Issuer? {
        let rows = try await transaction.query(
            """
            SELECT (SELECT count(*) FROM action_codes c
                    WHERE c.tenant_id = u.tenant_id AND c.uid = u.uid AND c.kind = \(kind.rawValue)
                      AND c.created_us > \(now.microseconds - Self.floodWindowMicroseconds)),
                greatest(u.valid_since_us, \(now.microseconds)), u.email
            FROM users u WHERE u.tenant_id = \(tenant.key) AND u.uid = \(uid) FOR SHARE OF u
            """, logger: logger)
        var issuer: Issuer?
        for try await (recent, issuedAt, email) in rows.decode((Int64, Int64, String?).self) {
            issuer = Issuer(recentCodes: Int(recent), issuedAt: Timestamp(microseconds: issuedAt), accountEmail: email)
        }
        return issuer
    }

    /// Stores `code` (its `issuedAt` and `accountEmail` as ``lockIssuer(tenant:uid:kind:now:in:)`` read
    /// them) under `codeHash`, in `transaction`.
    public func insert(_ code: ActionCode, codeHash: [UInt8], in transaction: Transaction) async throws {
        try await transaction.query(
            """
            INSERT INTO action_codes (tenant_id, code_hash, uid, kind, email, account_email, continue_url, created_us,
                expires_us)
            VALUES (\(code.scope.key), \(ByteBuffer(bytes: codeHash)), \(code.uid), \(code.kind.rawValue), \(code.email),
                    \(code.accountEmail), \(code.continueURL), \(code.issuedAt.microseconds), \(code.expiresAt.microseconds))
            """, logger: logger)
    }

    /// The unused code with this hash, without using it; `nil` when unknown or used.
    public func find(tenant: TenantScope, codeHash: [UInt8]) async throws -> ActionCode? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT uid, kind, email, continue_url, expires_us, created_us, account_email FROM action_codes
                WHERE tenant_id = \(tenant.key) AND code_hash = \(ByteBuffer(bytes: codeHash)) AND used_us IS NULL
                """, logger: logger)
            return try await Self.code(in: rows, tenant: tenant)
        }
    }

    /// Marks the unused code with this hash, of one of `kinds`, used at `now`, in `transaction`
    /// (a rollback leaves it unused); `nil` when there is none.
    public func use(
        tenant: TenantScope, codeHash: [UInt8], kinds: Set<EmailActionKind>, now: Timestamp, in transaction: Transaction
    ) async throws -> ActionCode? {
        let rows = try await transaction.query(
            """
            UPDATE action_codes SET used_us = \(now.microseconds)
            WHERE tenant_id = \(tenant.key) AND code_hash = \(ByteBuffer(bytes: codeHash)) AND used_us IS NULL
              AND kind = ANY(\(kinds.map(\.rawValue)))
            RETURNING uid, kind, email, continue_url, expires_us, created_us, account_email
            """, logger: logger)
        return try await Self.code(in: rows, tenant: tenant)
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

    /// The one code in `rows`.
    private static func code(in rows: PostgresRowSequence, tenant: TenantScope) async throws -> ActionCode? {
        var found: ActionCode?
        for try await (uid, kind, email, continueURL, expires, created, accountEmail) in rows.decode(
            (String, String, String, String?, Int64, Int64, String?).self)
        {
            guard let kind = EmailActionKind(rawValue: kind) else { continue }
            found = ActionCode(
                tenantId: tenant.tenantId, uid: uid, kind: kind, email: email, continueURL: continueURL,
                expiresAt: Timestamp(microseconds: expires), issuedAt: Timestamp(microseconds: created),
                accountEmail: accountEmail)
        }
        return found
    }
}
