public import PortcullisCore
import PostgresNIO

/// The two statements every sign-in and every refresh run, prepared once per connection
/// so PostgreSQL parses and plans them once.
extension RefreshSessionRepository {
    /// Every sign-in ends here, batched like the refresh (``StatementBatcher``) and
    /// prepared once per connection.
    ///
    /// Each request's row of the user is updated under its lock, and the session inserted
    /// only for the requests whose update matched. SQL arrays hold no absent values here, so
    /// an absent optional travels as a value none can take: `''` for a hash, an email or the
    /// claims, `-1` for a watermark. Requests come sorted by user, so two batches lock the
    /// users they share in the same order. Two sign-ins of one user in one batch update the
    /// row once: the other gets no row and runs again alone.
    struct StartSessions: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_start_sessions_v2"
        static let sql = """
            WITH requests AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::int8[], $6::text[], $7::text[],
                    $8::text[], $9::text[], $10::int8[], $11::text[]) WITH ORDINALITY
                    AS r(tenant_id, session_id, uid, token_hash, now_us, provider, upgraded_hash, proven_hash, proven_email,
                        valid_since, claims, position)),
            signed_in AS (
                UPDATE users SET last_login_us = greatest(requests.now_us, coalesce(users.last_login_us, 0)),
                    last_refresh_at = to_timestamp(requests.now_us / 1000000.0),
                    password_hash = coalesce(nullif(requests.upgraded_hash, ''), users.password_hash)
                FROM requests
                WHERE users.tenant_id = requests.tenant_id AND users.uid = requests.uid AND NOT users.disabled
                  AND (requests.proven_hash = ''
                    OR (users.password_hash = requests.proven_hash AND users.email = requests.proven_email))
                  AND (requests.valid_since < 0 OR users.valid_since_us = requests.valid_since)
                RETURNING requests.position, users.last_login_us),
            inserted AS (
                INSERT INTO refresh_sessions (tenant_id, session_id, uid, token_hash, issued_at, started_us, sign_in_provider,
                    developer_claims)
                SELECT requests.tenant_id, requests.session_id, requests.uid, requests.token_hash, requests.now_us / 1000000,
                    signed_in.last_login_us, requests.provider, nullif(requests.claims, '')
                FROM signed_in JOIN requests ON requests.position = signed_in.position
                RETURNING session_id, started_us)
            SELECT requests.position, inserted.started_us FROM inserted JOIN requests ON requests.session_id = inserted.session_id
            """
        static let bindingDataTypes: [PostgresDataType] = [
            .textArray, .textArray, .textArray, .byteaArray, .int8Array, .textArray, .textArray, .textArray, .textArray,
            .int8Array, .textArray,
        ]

        /// The requests, sorted by user, so batches that share users (other instances') lock
        /// them in one order.
        let starts: [SessionStart]
        /// Where each of ``starts`` is in the batch.
        private let order: [Int]

        /// The statement for `batch`.
        init(_ batch: [SessionStart]) {
            order = batch.indices.sorted { (batch[$0].scope.key, batch[$0].uid) < (batch[$1].scope.key, batch[$1].uid) }
            starts = order.map { batch[$0] }
        }

        /// Each request's session start, in the batch's order, from the statement's rows:
        /// `nil` where its user no longer qualifies.
        func answers(_ rows: [(position: Int, started: Int64)]) throws -> [Timestamp?] {
            try RefreshSessionRepository.inBatchOrder(rows.map { ($0.position, Timestamp(microseconds: $0.started)) }, order: order)
        }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 11)
            bindings.append(starts.map { $0.scope.key })
            bindings.append(starts.map(\.sessionId))
            bindings.append(starts.map(\.uid))
            bindings.append(starts.map { ByteBuffer(bytes: $0.tokenHash) })
            bindings.append(starts.map(\.now.microseconds))
            bindings.append(starts.map(\.signInProvider))
            bindings.append(starts.map { $0.upgradedPasswordHash ?? "" })
            bindings.append(starts.map { $0.provenPassword?.hash ?? "" })
            bindings.append(starts.map { $0.provenPassword?.email ?? "" })
            bindings.append(starts.map { $0.validSince?.microseconds ?? -1 })
            bindings.append(starts.map { $0.developerClaims ?? "" })
            return bindings
        }

        /// A started session: the (1-based) position of its request, and its start.
        func decodeRow(_ row: PostgresRow) throws -> (position: Int, started: Int64) {
            let (position, started) = try row.decode((Int64, Int64).self)
            return (Int(position), started)
        }
    }

    /// A batched statement's answers in its batch's order: `order[i]` is where the request at
    /// the statement's position `i + 1` came in the batch; `nil` for a request no row answered.
    static func inBatchOrder<Answer>(_ answers: [(position: Int, answer: Answer)], order: [Int]) throws -> [Answer?] {
        var ordered = [Answer?](repeating: nil, count: order.count)
        for (position, answer) in answers {
            guard order.indices.contains(position - 1) else { throw AuthError(.internalError) }
            ordered[order[position - 1]] = answer
        }
        return ordered
    }

    /// One refresh request of a batch: the presented token's hash for its successor's.
    public struct Rotation: Sendable {
        let tenant: String
        let sessionId: String
        let presentedHash: [UInt8]
        let successorHash: [UInt8]
        /// When the token is presented (unix seconds).
        public let now: Int64

        /// Presenting the token hashed `presentedHash` of session `sessionId` at `now` (unix
        /// seconds), to be replaced by the one hashed `successorHash`.
        public init(tenant: TenantScope, sessionId: String, presentedHash: [UInt8], successorHash: [UInt8], now: Int64) {
            self.tenant = tenant.key
            self.sessionId = sessionId
            self.presentedHash = presentedHash
            self.successorHash = successorHash
            self.now = now
        }
    }

    /// The common refresh of a batch of sessions, prepared once per connection: it is the
    /// hottest write, and concurrent refreshes share one statement and one commit
    /// (``StatementBatcher``).
    ///
    /// Its conditions are the `.rotate` outcome of `RefreshTokenPolicy` with a user who
    /// is not disabled, written as SQL so the common refresh costs no read first; a request
    /// for which it returns no row falls through to the caller's read of the session
    /// (``RefreshSessionRepository/presented(_:in:)``), where the policy itself decides. Requests come sorted by session, so two batches
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
            -- The time is the gateway's clock, as the batch's requests read it.
            touched AS (
                UPDATE users SET last_refresh_at = to_timestamp((SELECT max(requests.now) FROM requests))
                WHERE (users.tenant_id, users.uid) IN (
                    SELECT stale.tenant_id, stale.uid FROM users stale
                    WHERE (stale.tenant_id, stale.uid) IN (SELECT tenant, uid FROM rotated)
                      AND (stale.last_refresh_at IS NULL
                           OR stale.last_refresh_at < to_timestamp((SELECT max(requests.now) FROM requests)) - interval '1 minute')
                    FOR UPDATE SKIP LOCKED))
            SELECT * FROM rotated
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray, .byteaArray, .byteaArray, .int8Array]

        /// The requests, sorted by session, so batches that share rows (other instances') lock
        /// them in one order.
        let rotations: [Rotation]
        /// Where each of ``rotations`` is in the batch.
        private let order: [Int]

        /// The statement for `batch`.
        init(_ batch: [Rotation]) {
            order = batch.indices.sorted { (batch[$0].tenant, batch[$0].sessionId) < (batch[$1].tenant, batch[$1].sessionId) }
            rotations = order.map { batch[$0] }
        }

        /// Each request's rotated session and user, in the batch's order, from the statement's
        /// rows: `nil` where anything was off.
        func answers(
            _ rows: [(position: Int, session: RefreshSession, user: User)]
        ) throws -> [(session: RefreshSession, user: User)?] {
            try RefreshSessionRepository.inBatchOrder(rows.map { ($0.position, ($0.session, $0.user)) }, order: order)
        }

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
            guard let (user, _) = try UserRepository.decode(row, tenant: TenantScope(tenant), offset: 5) else {
                throw AuthError(.internalError)
            }
            let session = RefreshSession(
                uid: user.uid, started: Timestamp(microseconds: started), signInProvider: provider,
                developerClaims: RefreshSession.developerClaims(claims))
            return (Int(position), session, user)
        }
    }
}
