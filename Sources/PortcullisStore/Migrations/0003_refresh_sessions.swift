extension Migration {
    /// One row per session instead of one per refresh token.
    ///
    /// A refresh rewrites the session's row in place (the current secret's hash
    /// and the one it replaced) instead of inserting a row per rotation: the
    /// table grows with sign-ins, not with refreshes, and a rotation touches no
    /// index, so PostgreSQL updates the row where it lies. Tokens of the old
    /// table (`pr1.…`) are not honoured by this version; their users sign in again.
    /// The old table stays, unused, so that a previous binary still runs on this
    /// schema during a rolling upgrade or a rollback (deploy/README.md); a later
    /// migration drops it.
    static let refreshSessions = Migration(
        version: 3, name: "refresh_sessions",
        statements: [
            """
            CREATE TABLE refresh_sessions (
                tenant_id         text NOT NULL,
                session_id        text NOT NULL,
                uid               text NOT NULL,
                token_hash        bytea NOT NULL,
                previous_hash     bytea,
                issued_at         bigint NOT NULL,
                auth_time         bigint NOT NULL,
                sign_in_provider  text NOT NULL,
                revoked           boolean NOT NULL DEFAULT false,
                created_at        timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant_id, session_id),
                FOREIGN KEY (tenant_id, uid) REFERENCES users (tenant_id, uid) ON DELETE CASCADE
            )
            """,
            // Serves the cascade when a user is deleted.
            "CREATE INDEX refresh_sessions_user ON refresh_sessions (tenant_id, uid)",
        ])
}
