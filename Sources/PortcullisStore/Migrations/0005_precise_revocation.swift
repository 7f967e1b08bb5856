extension Migration {
    /// Revocation to the microsecond, sessions judged by their start, emails in lower
    /// case, and signing keys that can be published before they sign.
    ///
    /// - `users.valid_since_us` and `users.last_login_us` replace the whole-second
    ///   `valid_since` and `last_login_at`; `refresh_sessions.started_us` (the sign-in)
    ///   replaces `auth_time`, so a revocation and a sign-in in the same second order
    ///   correctly and a rotation never makes a session look younger.
    /// - Emails (and the `password` links that follow them) are lower-cased, as Firebase
    ///   stores them; the unique index on `lower(email)` guarantees no two collide.
    /// - `signing_keys.signs_from`: a scheduled rotation inserts the next key with a
    ///   future `signs_from` and retires the current one at that instant.
    /// - The `refresh_tokens` table that migration 3 kept for rollback goes: binaries
    ///   older than this migration cannot run on this schema anyway.
    static let preciseRevocation = Migration(
        version: 5, name: "precise_revocation",
        statements: [
            "ALTER TABLE users ADD COLUMN valid_since_us bigint NOT NULL DEFAULT 0",
            "ALTER TABLE users ADD COLUMN last_login_us bigint",
            """
            UPDATE users SET valid_since_us = valid_since * 1000000,
                last_login_us = (extract(epoch FROM last_login_at) * 1000000)::bigint
            """,
            "ALTER TABLE users DROP COLUMN valid_since, DROP COLUMN last_login_at",
            "ALTER TABLE refresh_sessions ADD COLUMN started_us bigint",
            "UPDATE refresh_sessions SET started_us = auth_time * 1000000",
            "ALTER TABLE refresh_sessions ALTER COLUMN started_us SET NOT NULL, DROP COLUMN auth_time",
            "UPDATE users SET email = lower(email) WHERE email <> lower(email)",
            """
            UPDATE user_providers SET federated_id = lower(federated_id), email = lower(email)
            WHERE provider_id = 'password' AND (federated_id <> lower(federated_id) OR email <> lower(email))
            """,
            "ALTER TABLE signing_keys ADD COLUMN signs_from timestamptz",
            "UPDATE signing_keys SET signs_from = created_at",
            "ALTER TABLE signing_keys ALTER COLUMN signs_from SET NOT NULL, ALTER COLUMN signs_from SET DEFAULT now()",
            "DROP TABLE refresh_tokens",
        ])
}
