extension Migration {
    /// Users, refresh tokens and per-tenant signing keys.
    ///
    /// `tenant_id` is `''` for the project's own users (it is part of every
    /// primary key, so it cannot be `NULL`); deleting a tenant deletes its rows
    /// in the same transaction (TenantRepository.delete).
    static let accounts = Migration(
        version: 2, name: "accounts",
        statements: [
            """
            CREATE TABLE signing_keys (
                tenant_id           text NOT NULL,
                kid                 text NOT NULL,
                algorithm           text NOT NULL,
                public_jwk          jsonb NOT NULL,
                sealed_private_key  bytea NOT NULL,
                created_at          timestamptz NOT NULL DEFAULT now(),
                retired_at          timestamptz,
                publish_until       timestamptz,
                PRIMARY KEY (tenant_id, kid)
            )
            """,
            "CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (tenant_id) WHERE retired_at IS NULL",
            """
            CREATE TABLE users (
                tenant_id          text NOT NULL,
                uid                text NOT NULL,
                email              text,
                email_verified     boolean NOT NULL DEFAULT false,
                display_name       text,
                photo_url          text,
                disabled           boolean NOT NULL DEFAULT false,
                custom_attributes  jsonb NOT NULL DEFAULT '{}',
                password_hash      text,
                created_at         timestamptz NOT NULL DEFAULT now(),
                last_login_at      timestamptz,
                last_refresh_at    timestamptz,
                valid_since        bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (tenant_id, uid)
            )
            """,
            // One account per email and tenant, case-insensitively: concurrent sign-ups race on this index.
            "CREATE UNIQUE INDEX users_email_unique ON users (tenant_id, lower(email)) WHERE email IS NOT NULL",
            """
            CREATE TABLE refresh_tokens (
                tenant_id         text NOT NULL,
                token_hash        bytea NOT NULL,
                family_id         text NOT NULL,
                uid               text NOT NULL,
                issued_at         bigint NOT NULL,
                auth_time         bigint NOT NULL,
                sign_in_provider  text NOT NULL,
                rotated_at        bigint,
                revoked           boolean NOT NULL DEFAULT false,
                PRIMARY KEY (tenant_id, token_hash),
                FOREIGN KEY (tenant_id, uid) REFERENCES users (tenant_id, uid) ON DELETE CASCADE
            )
            """,
            // Serves the user's cascade delete and family revocation (a family belongs to one user);
            // no separate family index, so each refresh maintains one index fewer.
            "CREATE INDEX refresh_tokens_user ON refresh_tokens (tenant_id, uid)",
        ])
}
