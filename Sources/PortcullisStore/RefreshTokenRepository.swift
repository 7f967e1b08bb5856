import Foundation
public import Logging
public import PortcullisCore
import PostgresNIO

/// A refresh token's session, as rotation needs it.
public struct RefreshSession: Sendable, Equatable {
    /// The user's uid.
    public let uid: String
    /// `auth_time` of the sign-in that started the family (kept by refreshes).
    public let authTime: Int64
    /// `firebase.sign_in_provider` of that sign-in.
    public let signInProvider: String
}

/// All SQL of the `refresh_tokens` table: only SHA-256 hashes of tokens are stored.
public struct RefreshTokenRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Starts a session in one statement: stores the first token of a new family
    /// and records the sign-in on the user (with the password's upgraded hash, if any).
    public func startSession(
        tenantId: String?, tokenHash: [UInt8], uid: String, now: Int64, signInProvider: String,
        upgradedPasswordHash: String? = nil
    ) async throws {
        _ = try await database.withConnection { connection in
            try await connection.query(
                """
                WITH session AS (
                    INSERT INTO refresh_tokens (tenant_id, token_hash, family_id, uid, issued_at, auth_time, sign_in_provider)
                    VALUES (\(tenantId ?? ""), \(ByteBuffer(bytes: tokenHash)), \(UUID().uuidString), \(uid), \(now), \(now),
                            \(signInProvider))
                    RETURNING tenant_id, uid)
                UPDATE users SET last_login_at = to_timestamp(\(now)),
                    password_hash = coalesce(\(upgradedPasswordHash), password_hash)
                FROM session WHERE users.tenant_id = session.tenant_id AND users.uid = session.uid
                """, logger: logger)
        }
    }

    /// Rotates a presented token: one read, ``RefreshTokenPolicy`` decides, one
    /// conditional write. The write only succeeds against the state that was
    /// read (optimistic concurrency), so of two racing rotations one wins and
    /// the other re-reads and is judged as a replay.
    ///
    /// - Returns: the session and user on success.
    /// - Throws: `INVALID_REFRESH_TOKEN`, `TOKEN_EXPIRED`, `USER_DISABLED`, `USER_NOT_FOUND`.
    public func rotate(
        tenantId: String?, tokenHash: [UInt8], successorHash: [UInt8], now: Int64, graceSeconds: Int
    ) async throws -> (session: RefreshSession, user: User) {
        let tenant = tenantId ?? ""
        let hash = ByteBuffer(bytes: tokenHash)
        for _ in 0..<3 {
            let state: (String, String, Int64, Int64?, Bool, Int64, Bool)? = try await database.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT t.family_id, t.uid, t.issued_at, t.rotated_at, t.revoked, u.valid_since, u.disabled
                    FROM refresh_tokens t JOIN users u ON u.tenant_id = t.tenant_id AND u.uid = t.uid
                    WHERE t.tenant_id = \(tenant) AND t.token_hash = \(hash)
                    """, logger: logger)
                for try await row in rows.decode((String, String, Int64, Int64?, Bool, Int64, Bool).self) { return row }
                return nil
            }
            guard let (family, uid, issuedAt, rotatedAt, revoked, validSince, disabled) = state else {
                throw AuthError(.invalidRefreshToken)
            }
            let decision = RefreshTokenPolicy.decide(
                .init(revoked: revoked, rotatedAt: rotatedAt, issuedAt: issuedAt), validSince: validSince, now: now,
                graceSeconds: graceSeconds)
            switch decision {
            case .invalid:
                throw AuthError(.invalidRefreshToken)
            case .expired:
                throw AuthError(.tokenExpired)
            case .reuseDetected:
                _ = try await database.withConnection { connection in
                    try await connection.query(
                        """
                        UPDATE refresh_tokens SET revoked = true
                        WHERE tenant_id = \(tenant) AND uid = \(uid) AND family_id = \(family)
                        """,
                        logger: logger)
                }
                throw AuthError(.invalidRefreshToken)
            case .rotate, .replayWithinGrace:
                guard !disabled else { throw AuthError(.userDisabled) }
                let rotating = decision == .rotate
                let outcome: (RefreshSession, User)? = try await database.withConnection { connection in
                    let rows = try await connection.query(
                        """
                        WITH marked AS (
                            UPDATE refresh_tokens SET rotated_at = CASE WHEN \(rotating) THEN \(now) ELSE rotated_at END
                            WHERE tenant_id = \(tenant) AND token_hash = \(hash) AND NOT revoked
                              AND rotated_at IS NOT DISTINCT FROM \(rotatedAt)
                            RETURNING family_id, uid, auth_time, sign_in_provider),
                        successor AS (
                            INSERT INTO refresh_tokens (tenant_id, token_hash, family_id, uid, issued_at, auth_time, sign_in_provider)
                            SELECT \(tenant), \(ByteBuffer(bytes: successorHash)), family_id, uid, \(now), auth_time, sign_in_provider
                            FROM marked
                            RETURNING uid, auth_time, sign_in_provider),
                        -- lastRefreshAt is kept to the minute: rewriting the user row on every refresh
                        -- would double the write load for a timestamp nobody reads to the second.
                        touched AS (
                            UPDATE users SET last_refresh_at = now()
                            FROM successor WHERE users.tenant_id = \(tenant) AND users.uid = successor.uid
                              AND (users.last_refresh_at IS NULL OR users.last_refresh_at < now() - interval '1 minute'))
                        SELECT successor.auth_time, successor.sign_in_provider, \(unescaped: UserRepository.qualifiedColumns)
                        FROM successor JOIN users ON users.tenant_id = \(tenant) AND users.uid = successor.uid
                        """, logger: logger)
                    for try await row in rows {
                        let (authTime, provider) = try row.decode((Int64, String).self)
                        guard let (user, _) = try UserRepository.decode(row, tenantId: tenantId, offset: 2) else { return nil }
                        return (RefreshSession(uid: user.uid, authTime: authTime, signInProvider: provider), user)
                    }
                    return nil
                }
                if let outcome { return outcome }
                // Another request rotated or revoked this token between our read and write: judge again.
            }
        }
        throw AuthError(.invalidRefreshToken)
    }
}
