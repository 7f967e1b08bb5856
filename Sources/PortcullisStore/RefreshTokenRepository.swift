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

    /// Stores the first token of a new family.
    public func insert(
        tenantId: String?, tokenHash: [UInt8], uid: String, issuedAt: Int64, authTime: Int64, signInProvider: String
    ) async throws {
        _ = try await database.withConnection { connection in
            try await connection.query(
                """
                INSERT INTO refresh_tokens (tenant_id, token_hash, family_id, uid, issued_at, auth_time, sign_in_provider)
                VALUES (\(tenantId ?? ""), \(ByteBuffer(bytes: tokenHash)), \(UUID().uuidString), \(uid), \(issuedAt),
                        \(authTime), \(signInProvider))
                """, logger: logger)
        }
    }

    /// Rotates a presented token in one transaction (row lock on the token):
    /// ``RefreshTokenPolicy`` decides; a successor hashed as `successorHash` is
    /// stored in the same family when allowed; reuse revokes the family.
    ///
    /// - Returns: the session and user on success.
    /// - Throws: `INVALID_REFRESH_TOKEN`, `TOKEN_EXPIRED`, `USER_DISABLED`, `USER_NOT_FOUND`.
    public func rotate(
        tenantId: String?, tokenHash: [UInt8], successorHash: [UInt8], now: Int64, graceSeconds: Int
    ) async throws -> (session: RefreshSession, user: User) {
        let tenant = tenantId ?? ""
        let outcome: Result<(RefreshSession, User), AuthError> = try await database.withTransaction { connection in
            let rows = try await connection.query(
                """
                SELECT t.family_id, t.uid, t.issued_at, t.auth_time, t.sign_in_provider, t.rotated_at, t.revoked,
                       u.valid_since
                FROM refresh_tokens t JOIN users u ON u.tenant_id = t.tenant_id AND u.uid = t.uid
                WHERE t.tenant_id = \(tenant) AND t.token_hash = \(ByteBuffer(bytes: tokenHash))
                FOR UPDATE OF t
                """, logger: logger)
            var found: (String, String, Int64, Int64, String, Int64?, Bool, Int64)?
            for try await row in rows.decode((String, String, Int64, Int64, String, Int64?, Bool, Int64).self) {
                found = row
            }
            guard let (family, uid, issuedAt, authTime, provider, rotatedAt, revoked, validSince) = found else {
                return .failure(AuthError(.invalidRefreshToken))
            }
            let decision = RefreshTokenPolicy.decide(
                .init(revoked: revoked, rotatedAt: rotatedAt, issuedAt: issuedAt), validSince: validSince, now: now,
                graceSeconds: graceSeconds)
            switch decision {
            case .invalid:
                return .failure(AuthError(.invalidRefreshToken))
            case .expired:
                return .failure(AuthError(.tokenExpired))
            case .reuseDetected:
                // Committed even though the request fails: the family must stay dead.
                try await connection.query(
                    "UPDATE refresh_tokens SET revoked = true WHERE tenant_id = \(tenant) AND family_id = \(family)",
                    logger: logger)
                return .failure(AuthError(.invalidRefreshToken))
            case .rotate, .replayWithinGrace:
                if decision == .rotate {
                    try await connection.query(
                        """
                        UPDATE refresh_tokens SET rotated_at = \(now)
                        WHERE tenant_id = \(tenant) AND token_hash = \(ByteBuffer(bytes: tokenHash))
                        """, logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO refresh_tokens (tenant_id, token_hash, family_id, uid, issued_at, auth_time, sign_in_provider)
                    VALUES (\(tenant), \(ByteBuffer(bytes: successorHash)), \(family), \(uid), \(now), \(authTime), \(provider))
                    """, logger: logger)
                let users = try await connection.query(
                    """
                    UPDATE users SET last_refresh_at = now() WHERE tenant_id = \(tenant) AND uid = \(uid)
                    RETURNING \(unescaped: UserRepository.columns)
                    """, logger: logger)
                guard let (user, _) = try await UserRepository.decode(users, tenantId: tenantId).first else {
                    return .failure(AuthError(.userNotFound))
                }
                return .success((RefreshSession(uid: uid, authTime: authTime, signInProvider: provider), user))
            }
        }
        let (session, user) = try outcome.get()
        if user.disabled { throw AuthError(.userDisabled) }
        return (session, user)
    }
}
