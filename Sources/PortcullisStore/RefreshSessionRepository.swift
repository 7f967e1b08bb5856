import Foundation
public import Logging
public import PortcullisCore
public import PortcullisJSON
import PostgresNIO

/// A session as refresh needs it: who signed in, when, and how.
public struct RefreshSession: Sendable, Equatable {
    /// The user's uid.
    public let uid: String
    /// When the sign-in that started the session happened: what revocation judges.
    public let started: Timestamp
    /// `firebase.sign_in_provider` of that sign-in.
    public let signInProvider: String
    /// The `claims` of the custom token the session started with: every ID token it mints
    /// carries them. Empty for other sessions.
    public var developerClaims: [String: JSONValue] = [:]

    /// `auth_time` of the session's ID tokens (kept by refreshes).
    public var authTime: Int64 { started.seconds }

    /// Reads the `developer_claims` column (a JSON object's text, written only by
    /// ``SessionStart``); anything else reads as none.
    static func developerClaims(_ text: String?) -> [String: JSONValue] {
        guard let text, case .object(let claims)? = try? JSONValue.parse(Array(text.utf8)) else { return [:] }
        return claims
    }
}

/// A sign-in about to become a session.
public struct SessionStart: Sendable, TenantOwned {
    /// The user's tenant (`nil`: project users).
    public var tenantId: String?
    /// The user.
    public var uid: String
    /// The new session's id and the hash of its first refresh token.
    public var sessionId: String
    /// SHA-256 of the first refresh token's secret.
    public var tokenHash: [UInt8]
    /// `firebase.sign_in_provider`.
    public var signInProvider: String
    /// The time of the sign-in.
    public var now: Timestamp
    /// For a password sign-in, the email and hash it proved: the session starts only if
    /// both are still the user's (a password changed meanwhile makes it fail).
    public var provenPassword: (email: String, hash: String)?
    /// A rehash of the password to store with the sign-in (new scrypt parameters).
    public var upgradedPasswordHash: String?
    /// For the session a credential change hands its caller, the watermark the change set:
    /// the session starts only if no revocation has moved it since (a concurrent change that
    /// came later holds, and ends this one's session as if it had started first).
    public var validSince: Timestamp?
    /// A custom token's `claims` as a JSON object's text, kept for the session's refreshes.
    public var developerClaims: String?

    /// A session start.
    public init(
        tenantId: String?, uid: String, sessionId: String, tokenHash: [UInt8], signInProvider: String, now: Timestamp,
        provenPassword: (email: String, hash: String)? = nil, upgradedPasswordHash: String? = nil, validSince: Timestamp? = nil,
        developerClaims: String? = nil
    ) {
        self.tenantId = tenantId
        self.uid = uid
        self.sessionId = sessionId
        self.tokenHash = tokenHash
        self.signInProvider = signInProvider
        self.now = now
        self.provenPassword = provenPassword
        self.upgradedPasswordHash = upgradedPasswordHash
        self.validSince = validSince
        self.developerClaims = developerClaims
    }
}

/// All SQL of the `refresh_sessions` table: one row per sign-in, holding only
/// SHA-256 hashes of the session's current refresh token and the one it replaced.
public struct RefreshSessionRepository: Sendable {
    let database: Database
    let logger: Logger
    /// Concurrent refreshes share one statement, and so do concurrent sign-ins (copies of the
    /// repository share the batchers).
    private let rotations: StatementBatcher<Rotation, RowKey, (session: RefreshSession, user: User)?>
    private let starts: StatementBatcher<SessionStart, RowKey, Timestamp?>

    /// The row a batched request locks: a session for a refresh, a user for a sign-in.
    private struct RowKey: Hashable, Sendable {
        let tenant: String
        let id: String
    }

    /// A repository over the database.
    ///
    /// - Parameters:
    ///   - database: the pool the statements run on.
    ///   - logger: where the statements log.
    ///   - concurrentBatches: batches of refreshes, and of sign-ins, that may run at
    ///     once, each on its own connection. Fewer batches make bigger ones (less database
    ///     work per request); the default, one per core of this machine but at least two,
    ///     keeps every core of a PostgreSQL as large as this machine busy.
    public init(database: Database, logger: Logger, concurrentBatches: Int? = nil) {
        self.database = database
        self.logger = logger
        let leaders = concurrentBatches ?? max(2, ProcessInfo.processInfo.activeProcessorCount)
        let slots = min(leaders, database.settings.maximumConnections)
        // Each batch is one statement and a transaction of its own, answered only once its
        // commit is confirmed.
        rotations = StatementBatcher(
            maximumLeaders: slots, maximumBatch: 64, key: { RowKey(tenant: $0.tenant, id: $0.sessionId) }
        ) { [logger] batch in
            let statement = RotateCurrentTokens(batch)
            return try statement.answers(try await database.committed(statement, logger: logger, function: "rotateCurrent"))
        }
        starts = StatementBatcher(maximumLeaders: slots, maximumBatch: 64, key: { RowKey(tenant: $0.scope.key, id: $0.uid) }) {
            [logger] batch in
            let statement = StartSessions(batch)
            return try statement.answers(try await database.committed(statement, logger: logger, function: "start"))
        }
    }

    /// ``SessionPolicy/isRevoked(sessionStart:validSince:)`` as SQL over the two columns
    /// it compares: the one revocation rule, for the statements that must apply it in
    /// the database.
    static func revoked(session: String, user: String) -> String { "\(session).started_us < \(user).valid_since_us" }

    /// Starts a session in one statement, under the user's row lock: records the sign-in
    /// on the user and stores the session's first token hash.
    ///
    /// The start is the later of `now` and the user's previous sign-in (a clock behind
    /// another instance's never makes sessions run backwards), and a revocation that
    /// follows takes a watermark after it (``UserRepository/update(tenant:uid:_:requiring:in:)``).
    /// A user disabled meanwhile, whose proven password changed meanwhile, or whose watermark
    /// moved past `start.validSince`, gets no session.
    ///
    /// - Returns: the session's start, or `nil` when the user no longer qualifies.
    public func start(_ start: SessionStart) async throws -> Timestamp? {
        // Batched with whatever sign-ins of other users are waiting (one user's run one after
        // another, so a batch's answer is the user's own); a failed batch runs again alone.
        switch await starts.submit(start) {
        case .answered(let started): return started
        case .unavailable: throw AuthError(.unavailable)
        case .failed:
            return try await database.withTransaction { [self] transaction in try await self.start(start, in: transaction) }
        }
    }

    /// ``start(_:)`` inside the caller's transaction (a sign-in decided under the user's row lock).
    public func start(_ start: SessionStart, in transaction: Transaction) async throws -> Timestamp? {
        try await Self.start(start, in: transaction, logger: logger)
    }

    /// ``start(_:in:)`` for a caller without the repository (a sign-up's first session).
    static func start(_ start: SessionStart, in transaction: Transaction, logger: Logger) async throws -> Timestamp? {
        let statement = StartSessions([start])
        return try statement.answers(try await transaction.execute(statement, logger: logger))[0]
    }

    /// The common refresh, batched with whatever other refreshes are waiting: the presented
    /// token is the current one of a live session of an enabled user, and the row is rewritten
    /// in place (the `.rotate` outcome of `RefreshTokenPolicy`, as SQL).
    ///
    /// - Returns: the session and user, or `nil` for anything else (a replay, a revoked
    ///   session or user, a race, a failed batch): the caller then reads the session
    ///   (``presented(_:in:)``) and lets the policy decide.
    public func rotateCurrent(_ rotation: Rotation) async throws -> (session: RefreshSession, user: User)? {
        switch await rotations.submit(rotation) {
        case .answered(let rotated): return rotated
        case .unavailable: throw AuthError(.unavailable)
        case .failed: return nil
        }
    }

    /// ``rotateCurrent(_:)`` for one rotation, inside the caller's transaction.
    public func rotateCurrent(
        _ rotation: Rotation, in transaction: Transaction
    ) async throws -> (session: RefreshSession, user: User)? {
        let statement = RotateCurrentTokens([rotation])
        return try statement.answers(try await transaction.execute(statement, logger: logger))[0]
    }

    /// A session as read for `RefreshTokenPolicy`, judged against the presented token.
    public struct PresentedSession: Sendable {
        /// What the policy decides on.
        public let state: RefreshTokenPolicy.State
        /// Whether the current token is the presented one's successor (always, unless the
        /// key deriving successors changed): only then may a replay be answered with it.
        public let successorIsCurrent: Bool
        /// The session.
        public let session: RefreshSession
        /// Its user, as stored.
        public let user: User
    }

    /// The session `rotation` presents a token of, with its user, read in `transaction`;
    /// `nil` when there is no such session.
    ///
    /// Hashes are compared by PostgreSQL: they are SHA-256 of 256-bit secrets, so how long a
    /// comparison takes says nothing an attacker could use.
    public func presented(_ rotation: Rotation, in transaction: Transaction) async throws -> PresentedSession? {
        let presented = ByteBuffer(bytes: rotation.presentedHash)
        let tenant = rotation.tenant
        let rows = try await transaction.query(
            """
            SELECT s.token_hash = \(presented), s.previous_hash IS NOT DISTINCT FROM \(presented),
                s.token_hash = \(ByteBuffer(bytes: rotation.successorHash)), s.issued_at, s.revoked, s.started_us,
                s.sign_in_provider, s.developer_claims, \(unescaped: UserRepository.qualifiedColumns)
            FROM refresh_sessions s JOIN users ON users.tenant_id = \(tenant) AND users.uid = s.uid
            WHERE s.tenant_id = \(tenant) AND s.session_id = \(rotation.sessionId)
            """, logger: logger)
        var found: PresentedSession?
        for try await row in rows {
            let (isCurrent, isPrevious, successorIsCurrent, issuedAt, revoked, started, provider, claims) = try row.decode(
                (Bool, Bool, Bool, Int64, Bool, Int64, String, String?).self)
            guard let (user, _) = try UserRepository.decode(row, tenant: TenantScope(tenant), offset: 8) else {
                continue
            }
            let session = RefreshSession(
                uid: user.uid, started: Timestamp(microseconds: started), signInProvider: provider,
                developerClaims: RefreshSession.developerClaims(claims))
            found = PresentedSession(
                state: .init(
                    presented: isCurrent ? .current : isPrevious ? .previous : .older, revoked: revoked,
                    started: session.started, issuedAt: issuedAt),
                successorIsCurrent: successorIsCurrent, session: session, user: user)
        }
        return found
    }

    /// Revokes the session `rotation` presents a token of, in `transaction` (reuse was detected).
    public func revoke(_ rotation: Rotation, in transaction: Transaction) async throws {
        try await transaction.query(
            "UPDATE refresh_sessions SET revoked = true WHERE tenant_id = \(rotation.tenant) AND session_id = \(rotation.sessionId)",
            logger: logger)
    }

    /// Where a sweep of dead sessions goes on: the key of the last session it examined.
    public struct SweepCursor: Sendable, Equatable {
        let tenant: String
        let sessionId: String
    }

    /// Deletes, among the `limit` sessions after `cursor` in key order (from the first when
    /// `nil`), those that can never refresh again (revoked, or started before their user's
    /// `validSince`) and were last rotated before `rotatedBefore`.
    ///
    /// A pass walks the table range by range, so each statement reads `limit` sessions however
    /// many there are: one that looked for dead sessions anywhere read every session when few
    /// were dead, and again for each batch (47 ms with 60,000 sessions; BENCHMARKS.md has it at
    /// 10,000,000). A maintenance sweep across tenants, like key rotation; rows another
    /// instance's sweep holds are skipped, so several instances can run it at once.
    /// - Returns: how many were deleted, and where the next range starts (`nil`: past the last session).
    public func deleteDeadSessions(
        after cursor: SweepCursor?, rotatedBefore: Int64, limit: Int
    ) async throws -> (
        deleted: Int, next: SweepCursor?
    ) {
        try await database.withTransaction { transaction in
            // Every tenant key sorts after "" (the project's is "" itself, and its session ids are not empty).
            // The range's size is written into the statement, not bound: a generic plan costs
            // `LIMIT $n` as a third of the table, and joined it to a scan of every session
            // (1.3 s a range at 10,000,000 sessions) rather than looking up `limit` of them.
            let rows = try await transaction.query(
                """
                WITH range AS (
                    SELECT tenant_id, session_id FROM refresh_sessions
                    WHERE (tenant_id, session_id) > (\(cursor?.tenant ?? ""), \(cursor?.sessionId ?? ""))
                    ORDER BY tenant_id, session_id LIMIT \(unescaped: String(limit))),
                dead AS (
                    SELECT s.tenant_id, s.session_id FROM range
                    JOIN refresh_sessions s ON s.tenant_id = range.tenant_id AND s.session_id = range.session_id
                    JOIN users u ON u.tenant_id = s.tenant_id AND u.uid = s.uid
                    WHERE s.issued_at < \(rotatedBefore) AND (s.revoked OR \(unescaped: Self.revoked(session: "s", user: "u")))
                    FOR UPDATE OF s SKIP LOCKED),
                deleted AS (
                    DELETE FROM refresh_sessions r USING dead
                    WHERE r.tenant_id = dead.tenant_id AND r.session_id = dead.session_id
                    RETURNING 1)
                SELECT (SELECT count(*) FROM deleted), (SELECT count(*) FROM range), last.tenant_id, last.session_id
                FROM (SELECT tenant_id, session_id FROM range ORDER BY tenant_id DESC, session_id DESC LIMIT 1) AS last
                """, logger: logger)
            for try await (deleted, examined, tenant, sessionId) in rows.decode((Int64, Int64, String, String).self) {
                return (Int(deleted), examined < limit ? nil : SweepCursor(tenant: tenant, sessionId: sessionId))
            }
            return (0, nil)
        }
    }
}
