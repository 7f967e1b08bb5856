extension Migration {
    /// Linked sign-in providers, one row per (provider, identity at the provider).
    ///
    /// The primary key makes an identity linkable to one account per tenant. The
    /// `password` link of existing accounts is backfilled from their email and hash.
    static let userProviders = Migration(
        version: 4, name: "user_providers",
        statements: [
            """
            CREATE TABLE user_providers (
                tenant_id     text NOT NULL,
                provider_id   text NOT NULL,
                federated_id  text NOT NULL,
                uid           text NOT NULL,
                email         text,
                display_name  text,
                photo_url     text,
                created_at    timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant_id, provider_id, federated_id),
                FOREIGN KEY (tenant_id, uid) REFERENCES users (tenant_id, uid) ON DELETE CASCADE
            )
            """,
            // Reads a user's links, and serves the cascade when the user is deleted.
            "CREATE INDEX user_providers_user ON user_providers (tenant_id, uid)",
            """
            INSERT INTO user_providers (tenant_id, provider_id, federated_id, uid, email)
            SELECT tenant_id, 'password', email, uid, email FROM users
            WHERE password_hash IS NOT NULL AND email IS NOT NULL
            """,
        ])
}
