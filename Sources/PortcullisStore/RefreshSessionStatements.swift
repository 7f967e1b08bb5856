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

    /// The common refresh, prepared once per connection: it is the hottest write.
    ///
    /// Its conditions are the `.rotate` outcome of ``RefreshTokenPolicy`` with a user who
    /// is not disabled, written as SQL so the common refresh is a single round trip; any
    /// other state falls through to ``rotate(tenantId:sessionId:presentedHash:successorHash:now:graceSeconds:)``'s
    /// read, where the policy itself decides.
    struct RotateCurrentToken: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_rotate_session_v3"
        static let sql = """
            WITH rotated AS (
                UPDATE refresh_sessions SET previous_hash = token_hash, token_hash = $4, issued_at = $5
                FROM users
                WHERE refresh_sessions.tenant_id = $1 AND refresh_sessions.session_id = $2
                  AND refresh_sessions.token_hash = $3 AND NOT refresh_sessions.revoked
                  AND users.tenant_id = $1 AND users.uid = refresh_sessions.uid
                  AND NOT users.disabled AND NOT (\(RefreshSessionRepository.revoked(session: "refresh_sessions", user: "users")))
                RETURNING refresh_sessions.started_us, refresh_sessions.sign_in_provider, refresh_sessions.developer_claims,
                    \(UserRepository.qualifiedColumns)),
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
            let (started, provider, claims) = try row.decode((Int64, String, String?).self)
            guard let (user, _) = try UserRepository.decode(row, tenantId: tenant.isEmpty ? nil : tenant, offset: 3) else {
                throw AuthError(.internalError)
            }
            let session = RefreshSession(
                uid: user.uid, started: Timestamp(microseconds: started), signInProvider: provider,
                developerClaims: RefreshSession.developerClaims(claims))
            return (session, user)
        }
    }
}
