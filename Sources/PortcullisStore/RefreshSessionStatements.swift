import PortcullisCore
import PostgresNIO

/// The two statements every sign-in and every refresh run, prepared once per connection
/// so PostgreSQL parses and plans them once.
extension RefreshSessionRepository {
    /// Every sign-in ends here: prepared once per connection, like the refresh.
    struct StartSession: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_start_session_v4"
        static let sql = """
            WITH signed_in AS (
                UPDATE users SET last_login_us = greatest($5, coalesce(last_login_us, 0)),
                    password_hash = coalesce($7, password_hash)
                WHERE tenant_id = $1 AND uid = $3 AND NOT disabled
                  AND ($8::text IS NULL OR (password_hash = $8 AND email = $9))
                  AND ($10::int8 IS NULL OR valid_since_us = $10)
                RETURNING last_login_us)
            INSERT INTO refresh_sessions (tenant_id, session_id, uid, token_hash, issued_at, started_us, sign_in_provider,
                developer_claims)
            SELECT $1, $2, $3, $4, $5 / 1000000, last_login_us, $6, $11 FROM signed_in
            RETURNING started_us
            """
        static let bindingDataTypes: [PostgresDataType] = [
            .text, .text, .text, .bytea, .int8, .text, .text, .text, .text, .int8, .text,
        ]

        let start: SessionStart

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 11)
            bindings.append(start.tenantId ?? "")
            bindings.append(start.sessionId)
            bindings.append(start.uid)
            bindings.append(ByteBuffer(bytes: start.tokenHash))
            bindings.append(start.now.microseconds)
            bindings.append(start.signInProvider)
            bindings.append(start.upgradedPasswordHash)
            bindings.append(start.provenPassword?.hash)
            bindings.append(start.provenPassword?.email)
            bindings.append(start.validSince?.microseconds)
            bindings.append(start.developerClaims)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    /// One refresh request of a batch: the presented token's hash for its successor's.
    struct Rotation: Sendable {
        let tenant: String
        let sessionId: String
        let presentedHash: [UInt8]
        let successorHash: [UInt8]
        let now: Int64
    }

    /// The common refresh of a batch of sessions, prepared once per connection: it is the
    /// hottest write, and concurrent refreshes share one statement and one commit
    /// (``StatementBatcher``).
    ///
    /// Its conditions are the `.rotate` outcome of ``RefreshTokenPolicy`` with a user who
    /// is not disabled, written as SQL so the common refresh costs no read first; a request
    /// for which it returns no row falls through to ``rotate(tenantId:sessionId:presentedHash:successorHash:now:graceSeconds:)``'s
    /// read, where the policy itself decides. Requests come sorted by session, so two batches
    /// lock the rows they share in the same order and never deadlock on them.
    struct RotateCurrentTokens: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_rotate_sessions_v1"
        static let sql = """
            WITH requests AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bytea[], $5::int8[]) WITH ORDINALITY
                    AS r(tenant_id, session_id, presented, successor, now, position)),
            rotated AS (
                UPDATE refresh_sessions SET previous_hash = token_hash, token_hash = requests.successor,
                    issued_at = requests.now
                FROM requests, users
                WHERE refresh_sessions.tenant_id = requests.tenant_id AND refresh_sessions.session_id = requests.session_id
                  AND refresh_sessions.token_hash = requests.presented AND NOT refresh_sessions.revoked
                  AND users.tenant_id = requests.tenant_id AND users.uid = refresh_sessions.uid
                  AND NOT users.disabled AND NOT (\(RefreshSessionRepository.revoked(session: "refresh_sessions", user: "users")))
                RETURNING requests.position, refresh_sessions.tenant_id AS tenant, refresh_sessions.started_us,
                    refresh_sessions.sign_in_provider, refresh_sessions.developer_claims, \(UserRepository.qualifiedColumns)),
            -- lastRefreshAt is kept to the minute: rewriting the user row on every refresh
            -- would double the write load for a timestamp nobody reads to the second. A user
            -- row another transaction holds is skipped rather than waited for (its next
            -- refresh records it), so a batch never waits on, or deadlocks over, user rows.
            touched AS (
                UPDATE users SET last_refresh_at = now()
                WHERE (users.tenant_id, users.uid) IN (
                    SELECT stale.tenant_id, stale.uid FROM users stale
                    WHERE (stale.tenant_id, stale.uid) IN (SELECT tenant, uid FROM rotated)
                      AND (stale.last_refresh_at IS NULL OR stale.last_refresh_at < now() - interval '1 minute')
                    FOR UPDATE SKIP LOCKED))
            SELECT * FROM rotated
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray, .byteaArray, .byteaArray, .int8Array]

        let rotations: [Rotation]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 5)
            bindings.append(rotations.map(\.tenant))
            bindings.append(rotations.map(\.sessionId))
            bindings.append(rotations.map { ByteBuffer(bytes: $0.presentedHash) })
            bindings.append(rotations.map { ByteBuffer(bytes: $0.successorHash) })
            bindings.append(rotations.map(\.now))
            return bindings
        }

        /// A rotated session, with the (1-based) position of the request that rotated it.
        func decodeRow(_ row: PostgresRow) throws -> (position: Int, session: RefreshSession, user: User) {
            let (position, tenant, started, provider, claims) = try row.decode((Int64, String, Int64, String, String?).self)
            guard let (user, _) = try UserRepository.decode(row, tenantId: tenant.isEmpty ? nil : tenant, offset: 5) else {
                throw AuthError(.internalError)
            }
            let session = RefreshSession(
                uid: user.uid, started: Timestamp(microseconds: started), signInProvider: provider,
                developerClaims: RefreshSession.developerClaims(claims))
            return (Int(position), session, user)
        }
    }
}
