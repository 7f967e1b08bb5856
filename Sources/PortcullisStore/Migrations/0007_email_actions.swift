extension Migration {
    /// Email action codes and the outbox their messages wait in.
    ///
    /// - `action_codes`: one row per code, found by the SHA-256 of the code (the code itself
    ///   is stored nowhere but in its message); `used_us` makes it single-use. No foreign
    ///   key to `users`: a user's codes are deleted before the user row (the order applying
    ///   a code locks them in), as its sessions are.
    /// - `email_outbox`: written in the transaction that issues the code, delivered by a
    ///   background service that claims due rows with `FOR UPDATE SKIP LOCKED` and a lease
    ///   (`next_attempt_at`), so two instances never hold one message at once and a daemon
    ///   killed mid-delivery retries it after the lease. `sealed_content` (the link) is
    ///   sealed under the master key and wiped once delivered or given up on.
    static let emailActions = Migration(
        version: 7, name: "email_actions",
        statements: [
            """
            CREATE TABLE action_codes (
                tenant_id     text NOT NULL,
                code_hash     bytea NOT NULL,
                uid           text NOT NULL,
                kind          text NOT NULL,
                email         text NOT NULL,
                continue_url  text,
                created_us    bigint NOT NULL,
                expires_us    bigint NOT NULL,
                used_us       bigint,
                PRIMARY KEY (tenant_id, code_hash)
            )
            """,
            // The flood limit counts a user's recent codes; a user's deletion removes them.
            "CREATE INDEX action_codes_user ON action_codes (tenant_id, uid, created_us)",
            """
            CREATE TABLE email_outbox (
                tenant_id        text NOT NULL,
                message_id       uuid NOT NULL DEFAULT gen_random_uuid(),
                kind             text NOT NULL,
                uid              text NOT NULL,
                recipient        text NOT NULL,
                sealed_content   bytea,
                attempts         integer NOT NULL DEFAULT 0,
                next_attempt_at  timestamptz NOT NULL DEFAULT now(),
                created_at       timestamptz NOT NULL DEFAULT now(),
                delivered_at     timestamptz,
                dead_at          timestamptz,
                last_error       text,
                PRIMARY KEY (tenant_id, message_id)
            )
            """,
            // What the delivery service scans: only messages still waiting.
            """
            CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at)
                WHERE delivered_at IS NULL AND dead_at IS NULL
            """,
        ])
}
