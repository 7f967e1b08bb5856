import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// A session as refresh needs it: who signed in, when, and how.
public struct RefreshSession: Sendable, Equatable {
    /// The user's uid.
    public let uid: String
    /// When the sign-in that started the session happened: what revocation judges.
    public let started: Timestamp
    /// `firebase.sign_in_provider` of that sign-in.
    public let signInProvider: String

    /// `auth_time` of the session's ID tokens (kept by refreshes).
    public var authTime: Int64 { started.seconds }
}

/// A sign-in about to become a session.
public struct SessionStart: Sendable {
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

    /// A session start.
    public init(
        tenantId: String?, uid: String, sessionId: String, tokenHash: [UInt8], signInProvider: String, now: Timestamp,
        provenPassword: (email: String, hash: String)? = nil, upgradedPasswordHash: String? = nil
    ) {
        self.tenantId = tenantId
        self.uid = uid
        self.sessionId = sessionId
        self.tokenHash = tokenHash
        self.signInProvider = signInProvider
        self.now = now
        self.provenPassword = provenPassword
        self.upgradedPasswordHash = upgradedPasswordHash
    }
}

/// All SQL of the `refresh_sessions` table: one row per sign-in, holding only
/// SHA-256 hashes of the session's current refresh token and the one it replaced.
public struct RefreshSessionRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
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
    /// follows takes a watermark after it (``UserRepository/update(tenantId:uid:_:requiring:)``).
    /// A user disabled meanwhile, or whose proven password changed meanwhile, gets no session.
    ///
    /// - Returns: the session's start, or `nil` when the user no longer qualifies.
    public func start(_ start: SessionStart) async throws -> Timestamp? {
        let statement = StartSession(start: start)
        return try await database.withConnection { connection in
            for try await started in try await connection.execute(statement, logger: logger) {
                return Timestamp(microseconds: started)
            }
            return nil
        }
    }

    /// Every sign-in ends here: prepared once per connection, like the refresh.
    private struct StartSession: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_start_session_v2"
        static let sql = """
            WITH signed_in AS (
                UPDATE users SET last_login_us = greatest($5, coalesce(last_login_us, 0)),
                    password_hash = coalesce($7, password_hash)
                WHERE tenant_id = $1 AND uid = $3 AND NOT disabled
                  AND ($8::text IS NULL OR (password_hash = $8 AND email = $9))
                RETURNING last_login_us)
            INSERT INTO refresh_sessions (tenant_id, session_id, uid, token_hash, issued_at, started_us, sign_in_provider)
            SELECT $1, $2, $3, $4, $5 / 1000000, last_login_us, $6 FROM signed_in
            RETURNING started_us
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .text, .text, .bytea, .int8, .text, .text, .text, .text]

        let start: SessionStart

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 9)
            bindings.append(start.tenantId ?? "")
            bindings.append(start.sessionId)
            bindings.append(start.uid)
            bindings.append(ByteBuffer(bytes: start.tokenHash))
            bindings.append(start.now.microseconds)
            bindings.append(start.signInProvider)
            bindings.append(start.upgradedPasswordHash)
            bindings.append(start.provenPassword?.hash)
            bindings.append(start.provenPassword?.email)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    /// Makes `successorHash` the session's current token in exchange for the presented one.
    ///
    /// The common case is one statement: the presented token is the current one of a
    /// live session, and the row is rewritten in place. Anything else (a replay, a
    /// revoked session or user, a race) reads the session and lets
    /// ``RefreshTokenPolicy`` decide. A replay within the grace window answers with the
    /// current token, which is `successorHash`'s token by construction.
    ///
    /// - Returns: the session and user on success.
    /// - Throws: `INVALID_REFRESH_TOKEN`, `TOKEN_EXPIRED`, `USER_DISABLED`.
    public func rotate(
        tenantId: String?, sessionId: String, presentedHash: [UInt8], successorHash: [UInt8], now: Int64,
        graceSeconds: Int
    ) async throws -> (session: RefreshSession, user: User) {
        let tenant = tenantId ?? ""
        return try await database.withConnection { connection in
            for _ in 0..<3 {
                if let rotated = try await rotateCurrent(
                    connection, tenant: tenant, sessionId: sessionId, presentedHash: presentedHash,
                    successorHash: successorHash, now: now)
                {
                    return rotated
                }
                guard
                    let state = try await read(
                        connection, tenant: tenant, sessionId: sessionId, presentedHash: presentedHash,
                        successorHash: successorHash)
                else { throw AuthError(.invalidRefreshToken) }
                let decision = RefreshTokenPolicy.decide(
                    .init(
                        presented: state.presented, revoked: state.revoked, started: state.session.started,
                        issuedAt: state.issuedAt),
                    validSince: state.user.validSince, now: now, graceSeconds: graceSeconds)
                switch decision {
                case .invalid:
                    throw AuthError(.invalidRefreshToken)
                case .expired:
                    throw AuthError(.tokenExpired)
                case .reuseDetected:
                    try await connection.query(
                        "UPDATE refresh_sessions SET revoked = true WHERE tenant_id = \(tenant) AND session_id = \(sessionId)",
                        logger: logger)
                    throw AuthError(.invalidRefreshToken)
                case .replayWithinGrace:
                    guard !state.user.disabled else { throw AuthError(.userDisabled) }
                    guard state.successorIsCurrent else { throw AuthError(.invalidRefreshToken) }
                    return (state.session, state.user)
                case .rotate:
                    guard !state.user.disabled else { throw AuthError(.userDisabled) }
                // The session changed between the two statements: try again.
                }
            }
            throw AuthError(.invalidRefreshToken)
        }
    }

    /// The one-statement rotation of a live session's current token; `nil` if anything is off.
    private func rotateCurrent(
        _ connection: PostgresConnection, tenant: String, sessionId: String, presentedHash: [UInt8],
        successorHash: [UInt8], now: Int64
    ) async throws -> (session: RefreshSession, user: User)? {
        let statement = RotateCurrentToken(
            tenant: tenant, sessionId: sessionId, presentedHash: presentedHash, successorHash: successorHash, now: now)
        for try await rotated in try await connection.execute(statement, logger: logger) {
            return rotated
        }
        return nil
    }

    /// The common refresh, prepared once per connection: it is the hottest write.
    ///
    /// Its conditions are the `.rotate` outcome of ``RefreshTokenPolicy`` with a user who
    /// is not disabled, written as SQL so the common refresh is a single round trip; any
    /// other state falls through to ``rotate(tenantId:sessionId:presentedHash:successorHash:now:graceSeconds:)``'s
    /// read, where the policy itself decides.
    private struct RotateCurrentToken: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_rotate_session_v2"
        static let sql = """
            WITH rotated AS (
                UPDATE refresh_sessions SET previous_hash = token_hash, token_hash = $4, issued_at = $5
                FROM users
                WHERE refresh_sessions.tenant_id = $1 AND refresh_sessions.session_id = $2
                  AND refresh_sessions.token_hash = $3 AND NOT refresh_sessions.revoked
                  AND users.tenant_id = $1 AND users.uid = refresh_sessions.uid
                  AND NOT users.disabled AND NOT (\(RefreshSessionRepository.revoked(session: "refresh_sessions", user: "users")))
                RETURNING refresh_sessions.started_us, refresh_sessions.sign_in_provider, \(UserRepository.qualifiedColumns)),
            -- lastRefreshAt is kept to the minute: rewriting the user row on every refresh
            -- would double the write load for a timestamp nobody reads to the second.
            -- The uid as a scalar subquery, not a join: the row is then found by its primary
            -- key whatever the planner believes about the table's size.
            touched AS (
                UPDATE users SET last_refresh_at = now()
                WHERE users.tenant_id = $1 AND users.uid = (SELECT uid FROM rotated)
                  AND (users.last_refresh_at IS NULL OR users.last_refresh_at < now() - interval '1 minute'))
            SELECT * FROM rotated
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .text, .bytea, .bytea, .int8]

        let tenant: String
        let sessionId: String
        let presentedHash: [UInt8]
        let successorHash: [UInt8]
        let now: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 5)
            bindings.append(tenant)
            bindings.append(sessionId)
            bindings.append(ByteBuffer(bytes: presentedHash))
            bindings.append(ByteBuffer(bytes: successorHash))
            bindings.append(now)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> (session: RefreshSession, user: User) {
            let (started, provider) = try row.decode((Int64, String).self)
            guard let (user, _) = try UserRepository.decode(row, tenantId: tenant.isEmpty ? nil : tenant, offset: 2) else {
                throw AuthError(.internalError)
            }
            return (RefreshSession(uid: user.uid, started: Timestamp(microseconds: started), signInProvider: provider), user)
        }
    }

    /// A session as read for the policy, judged against the presented token.
    private struct StoredSession {
        let presented: RefreshTokenPolicy.Presented
        /// Whether the current token is the presented one's successor (always, unless the
        /// key deriving successors changed).
        let successorIsCurrent: Bool
        let issuedAt: Int64
        let revoked: Bool
        let session: RefreshSession
        let user: User
    }

    /// Deletes up to `limit` sessions that can never refresh again (revoked, or started
    /// before their user's `validSince`) and were last rotated before `rotatedBefore`.
    ///
    /// A maintenance sweep across tenants, like key rotation; rows another instance's
    /// sweep holds are skipped, so several instances can run it at once.
    /// - Returns: how many were deleted.
    public func deleteDeadSessions(rotatedBefore: Int64, limit: Int) async throws -> Int {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                WITH dead AS (
                    SELECT s.tenant_id, s.session_id FROM refresh_sessions s
                    JOIN users u ON u.tenant_id = s.tenant_id AND u.uid = s.uid
                    WHERE s.issued_at < \(rotatedBefore) AND (s.revoked OR \(unescaped: Self.revoked(session: "s", user: "u")))
                    LIMIT \(limit) FOR UPDATE OF s SKIP LOCKED)
                DELETE FROM refresh_sessions r USING dead
                WHERE r.tenant_id = dead.tenant_id AND r.session_id = dead.session_id
                RETURNING 1
                """, logger: logger)
            var deleted = 0
            for try await _ in rows { deleted += 1 }
            return deleted
        }
    }

    // Hashes are compared by PostgreSQL: they are SHA-256 of 256-bit secrets, so how
    // long a comparison takes says nothing an attacker could use.
    private func read(
        _ connection: PostgresConnection, tenant: String, sessionId: String, presentedHash: [UInt8],
        successorHash: [UInt8]
    ) async throws -> StoredSession? {
        let presented = ByteBuffer(bytes: presentedHash)
        let rows = try await connection.query(
            """
            SELECT s.token_hash = \(presented), s.previous_hash IS NOT DISTINCT FROM \(presented),
                s.token_hash = \(ByteBuffer(bytes: successorHash)), s.issued_at, s.revoked, s.started_us, s.sign_in_provider,
                \(unescaped: UserRepository.qualifiedColumns)
            FROM refresh_sessions s JOIN users ON users.tenant_id = \(tenant) AND users.uid = s.uid
            WHERE s.tenant_id = \(tenant) AND s.session_id = \(sessionId)
            """, logger: logger)
        for try await row in rows {
            let (isCurrent, isPrevious, successorIsCurrent, issuedAt, revoked, started, provider) = try row.decode(
                (Bool, Bool, Bool, Int64, Bool, Int64, String).self)
            guard let (user, _) = try UserRepository.decode(row, tenantId: tenant.isEmpty ? nil : tenant, offset: 7) else {
                return nil
            }
            return StoredSession(
                presented: isCurrent ? .current : isPrevious ? .previous : .older, successorIsCurrent: successorIsCurrent,
                issuedAt: issuedAt, revoked: revoked,
                session: RefreshSession(uid: user.uid, started: Timestamp(microseconds: started), signInProvider: provider),
                user: user)
        }
        return nil
    }
}
