import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// A message to write to the outbox: routing in the clear, the rest (the link) sealed.
public struct OutboxEntry: Sendable, TenantOwned {
    /// The tenant, `nil` for project users.
    public var tenantId: String?
    /// What the message is for.
    public var kind: EmailActionKind
    /// The user concerned.
    public var uid: String
    /// Where it goes.
    public var recipient: String
    /// `EmailMessage.content` sealed under the master key.
    public var sealedContent: [UInt8]

    /// An entry.
    public init(tenantId: String?, kind: EmailActionKind, uid: String, recipient: String, sealedContent: [UInt8]) {
        self.tenantId = tenantId
        self.kind = kind
        self.uid = uid
        self.recipient = recipient
        self.sealedContent = sealedContent
    }
}

/// An outbox message claimed for one delivery attempt.
public struct ClaimedMessage: Sendable {
    /// The message's id.
    public var id: String
    /// The entry as written.
    public var entry: OutboxEntry
    /// Attempts so far, this one included.
    public var attempts: Int
}

/// All SQL of `email_outbox`.
///
/// Delivery is at least once: a message is claimed with a lease (its `next_attempt_at`
/// moves past the attempt's deadline) under `FOR UPDATE SKIP LOCKED`, so two instances
/// never claim it together, and a daemon that dies mid-attempt leaves it to be claimed
/// again when the lease runs out.
public struct EmailOutboxRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Writes `entry` inside the caller's transaction (the one issuing its code).
    static func enqueue(_ entry: OutboxEntry, in transaction: Transaction, logger: Logger) async throws {
        try await transaction.query(
            """
            INSERT INTO email_outbox (tenant_id, kind, uid, recipient, sealed_content)
            VALUES (\(entry.scope.key), \(entry.kind.rawValue), \(entry.uid), \(entry.recipient), \(ByteBuffer(bytes: entry.sealedContent)))
            """, logger: logger)
    }

    /// Writes `entry` inside `transaction` (the one issuing its code): the message goes out
    /// exactly when the code exists.
    public func enqueue(_ entry: OutboxEntry, in transaction: Transaction) async throws {
        try await Self.enqueue(entry, in: transaction, logger: logger)
    }

    /// Claims up to `limit` due messages, oldest first, for an attempt that must end within `lease`.
    public func claimDue(limit: Int, lease: Duration) async throws -> [ClaimedMessage] {
        let leaseMilliseconds = lease.components.seconds * 1000 + lease.components.attoseconds / 1_000_000_000_000_000
        // Leases and retry times are on the database's clock: every instance's delivery loop
        // compares them with that one clock, whatever its own says.
        return try await database.withTransaction { transaction in
            let rows = try await transaction.query(
                """
                UPDATE email_outbox o SET attempts = o.attempts + 1,
                    next_attempt_at = now() + make_interval(secs => \(Double(leaseMilliseconds) / 1000))
                FROM (SELECT tenant_id, message_id FROM email_outbox
                      WHERE delivered_at IS NULL AND dead_at IS NULL AND next_attempt_at <= now()
                      ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED) due
                WHERE o.tenant_id = due.tenant_id AND o.message_id = due.message_id
                RETURNING o.tenant_id, o.message_id::text, o.kind, o.uid, o.recipient, o.sealed_content, o.attempts
                """, logger: logger)
            var claimed: [ClaimedMessage] = []
            for try await (tenant, id, kind, uid, recipient, sealed, attempts) in rows.decode(
                (String, String, String, String, String, ByteBuffer?, Int32).self)
            {
                guard let kind = EmailActionKind(rawValue: kind), let sealed else { continue }
                claimed.append(
                    ClaimedMessage(
                        id: id,
                        entry: OutboxEntry(
                            tenantId: tenant.isEmpty ? nil : tenant, kind: kind, uid: uid, recipient: recipient,
                            sealedContent: Array(sealed.readableBytesView)),
                        attempts: Int(attempts)))
            }
            return claimed
        }
    }

    /// Records a delivery and wipes the sealed link.
    public func markDelivered(_ message: ClaimedMessage) async throws {
        _ = try await database.withTransaction { transaction in
            try await transaction.query(
                """
                UPDATE email_outbox SET delivered_at = now(), sealed_content = NULL, last_error = NULL
                WHERE tenant_id = \(message.entry.scope.key) AND message_id = \(message.id)::uuid
                """, logger: logger)
        }
    }

    /// Records a failed attempt: tried again after `retryAfter`, or, when `nil`, given up on
    /// (dead-lettered, the sealed link wiped; the row stays for the operator).
    ///
    /// Only the message's latest claim records a failure. An attempt that outlived its
    /// lease has been claimed again since (`attempts` moved on), and that newer attempt may
    /// already have delivered the message; the stale failure must not reschedule it, or
    /// dead-letter and wipe it. A give-up's `deadLetter` audit row is written in the same
    /// transaction.
    /// - Returns: whether the failure was recorded (`false` for a stale claim).
    @discardableResult
    public func markFailed(
        _ message: ClaimedMessage, reason: String, retryAfter: Duration?, deadLetter: AuditEntry? = nil
    ) async throws -> Bool {
        let delay = retryAfter.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
        return try await database.withTransaction { [logger] transaction in
            var changed = 0
            for try await _ in try await transaction.query(
                """
                UPDATE email_outbox SET last_error = \(String(reason.prefix(500))),
                    next_attempt_at = CASE WHEN \(delay != nil) THEN now() + make_interval(secs => \(delay ?? 0))
                                           ELSE next_attempt_at END,
                    dead_at = CASE WHEN \(delay == nil) THEN now() END,
                    sealed_content = CASE WHEN \(delay == nil) THEN NULL ELSE sealed_content END
                WHERE tenant_id = \(message.entry.scope.key) AND message_id = \(message.id)::uuid
                  AND attempts = \(Int32(message.attempts))
                RETURNING 1
                """, logger: logger)
            {
                changed += 1
            }
            if changed == 1, let deadLetter { try await AuditLogRepository.record(deadLetter, in: transaction, logger: logger) }
            return changed == 1
        }
    }

    /// Deletes up to `limit` messages delivered or given up on before `finishedBefore`, across
    /// tenants; rows another instance's sweep holds are skipped.
    /// - Returns: how many were deleted.
    public func deleteFinished(before finishedBefore: Timestamp, limit: Int) async throws -> Int {
        try await database.changedRows(
            """
            WITH finished AS (
                SELECT tenant_id, message_id FROM email_outbox
                WHERE coalesce(delivered_at, dead_at) < to_timestamp(\(Double(finishedBefore.microseconds) / 1_000_000))
                LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            DELETE FROM email_outbox o USING finished
            WHERE o.tenant_id = finished.tenant_id AND o.message_id = finished.message_id
            RETURNING 1
            """, logger: logger)
    }

    /// The state of every message of a tenant, oldest first (operators, tests):
    /// `(id, kind, recipient, attempts, delivered, dead, last error)`.
    public func messages(tenant: TenantScope) async throws -> [OutboxStatus] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT message_id::text, kind, recipient, attempts, delivered_at IS NOT NULL, dead_at IS NOT NULL, last_error
                FROM email_outbox WHERE tenant_id = \(tenant.key) ORDER BY created_at, message_id
                """, logger: logger)
            var statuses: [OutboxStatus] = []
            for try await (id, kind, recipient, attempts, delivered, dead, error) in rows.decode(
                (String, String, String, Int32, Bool, Bool, String?).self)
            {
                statuses.append(
                    OutboxStatus(
                        id: id, kind: kind, recipient: recipient, attempts: Int(attempts), delivered: delivered, dead: dead,
                        lastError: error))
            }
            return statuses
        }
    }
}

/// Where one outbox message stands.
public struct OutboxStatus: Sendable, Equatable {
    /// The message's id.
    public var id: String
    /// `VERIFY_EMAIL`, …
    public var kind: String
    /// Where it goes.
    public var recipient: String
    /// Attempts made.
    public var attempts: Int
    /// Whether it was delivered.
    public var delivered: Bool
    /// Whether it was given up on.
    public var dead: Bool
    /// Why the latest attempt failed.
    public var lastError: String?
}
