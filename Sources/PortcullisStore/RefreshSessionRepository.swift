import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// A session as refresh needs it: who signed in, when, and how.
public struct RefreshSession: Sendable, Equatable {
    /// The user's uid.
    public let uid: String
    /// `auth_time` of the sign-in that started the session (kept by refreshes).
    public let authTime: Int64
    /// `firebase.sign_in_provider` of that sign-in.
    public let signInProvider: String
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

    /// Starts a session in one statement: stores its first token's hash and records
    /// the sign-in on the user (with the password's upgraded hash, if any).
    public func start(
        tenantId: String?, sessionId: String, tokenHash: [UInt8], uid: String, now: Int64, signInProvider: String,
        upgradedPasswordHash: String? = nil
    ) async throws {
        let statement = StartSession(
            tenant: tenantId ?? "", sessionId: sessionId, tokenHash: tokenHash, uid: uid, now: now,
            signInProvider: signInProvider, upgradedPasswordHash: upgradedPasswordHash)
        try await database.withConnection { connection in
            for try await _ in try await connection.execute(statement, logger: logger) {}
        }
    }

    /// Every sign-in ends here: prepared once per connection, like the refresh.
    private struct StartSession: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_start_session"
        static let sql = """
            WITH session AS (
                INSERT INTO refresh_sessions (tenant_id, session_id, uid, token_hash, issued_at, auth_time, sign_in_provider)
                VALUES ($1, $2, $3, $4, $5, $5, $6))
            UPDATE users SET last_login_at = to_timestamp($5), password_hash = coalesce($7, password_hash)
            WHERE users.tenant_id = $1 AND users.uid = $3
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .text, .text, .bytea, .int8, .text, .text]

        let tenant: String
        let sessionId: String
        let tokenHash: [UInt8]
        let uid: String
        let now: Int64
        let signInProvider: String
        let upgradedPasswordHash: String?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(tenant)
            bindings.append(sessionId)
            bindings.append(uid)
            bindings.append(ByteBuffer(bytes: tokenHash))
            bindings.append(now)
            bindings.append(signInProvider)
            bindings.append(upgradedPasswordHash)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
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
                    .init(presented: state.presented, revoked: state.revoked, issuedAt: state.issuedAt),
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
        static let name = "portcullis_rotate_session"
        static let sql = """
            WITH rotated AS (
                UPDATE refresh_sessions SET previous_hash = token_hash, token_hash = $4, issued_at = $5
                FROM users
                WHERE refresh_sessions.tenant_id = $1 AND refresh_sessions.session_id = $2
                  AND refresh_sessions.token_hash = $3 AND NOT refresh_sessions.revoked
                  AND users.tenant_id = $1 AND users.uid = refresh_sessions.uid
                  AND NOT users.disabled AND refresh_sessions.issued_at >= users.valid_since
                RETURNING refresh_sessions.auth_time, refresh_sessions.sign_in_provider, \(UserRepository.qualifiedColumns)),
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
            let (authTime, provider) = try row.decode((Int64, String).self)
            guard let (user, _) = try UserRepository.decode(row, tenantId: tenant.isEmpty ? nil : tenant, offset: 2) else {
                throw AuthError(.internalError)
            }
            return (RefreshSession(uid: user.uid, authTime: authTime, signInProvider: provider), user)
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

    /// Deletes up to `limit` sessions that can never refresh again (revoked, or issued
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
                    WHERE s.issued_at < \(rotatedBefore) AND (s.revoked OR s.issued_at < u.valid_since)
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
                s.token_hash = \(ByteBuffer(bytes: successorHash)), s.issued_at, s.revoked, s.auth_time, s.sign_in_provider,
                \(unescaped: UserRepository.qualifiedColumns)
            FROM refresh_sessions s JOIN users ON users.tenant_id = \(tenant) AND users.uid = s.uid
            WHERE s.tenant_id = \(tenant) AND s.session_id = \(sessionId)
            """, logger: logger)
        for try await row in rows {
            let (isCurrent, isPrevious, successorIsCurrent, issuedAt, revoked, authTime, provider) = try row.decode(
                (Bool, Bool, Bool, Int64, Bool, Int64, String).self)
            guard let (user, _) = try UserRepository.decode(row, tenantId: tenant.isEmpty ? nil : tenant, offset: 7) else {
                return nil
            }
            return StoredSession(
                presented: isCurrent ? .current : isPrevious ? .previous : .older, successorIsCurrent: successorIsCurrent,
                issuedAt: issuedAt, revoked: revoked,
                session: RefreshSession(uid: user.uid, authTime: authTime, signInProvider: provider), user: user)
        }
        return nil
    }
}
