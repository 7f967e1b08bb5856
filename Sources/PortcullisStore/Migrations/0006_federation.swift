extension Migration {
    /// Federated identity providers and custom-token service accounts, per tenant
    /// (`''` for the project's own).
    ///
    /// - `identity_providers`: one row per configured provider (`google.com`, `oidc.<name>`,
    ///   …). `client_secret` is kept for the authorization-code flows a provider may need;
    ///   no answer ever includes it.
    /// - `service_accounts`: the public halves of the keys that sign custom tokens, found
    ///   by `kid` (the service-account JSON's `private_key_id`) or, for SDKs that send no
    ///   `kid`, by the signer's email. The private half of a generated key is never stored.
    /// - `refresh_sessions.developer_claims`: the `claims` of the custom token a session
    ///   started with; every ID token of that session carries them, as in Firebase.
    static let federation = Migration(
        version: 6, name: "federation",
        statements: [
            """
            CREATE TABLE identity_providers (
                tenant_id      text NOT NULL,
                provider_id    text NOT NULL,
                display_name   text,
                enabled        boolean NOT NULL,
                client_id      text NOT NULL,
                client_ids     jsonb NOT NULL DEFAULT '[]',
                issuer         text,
                jwks_uri       text,
                user_info_uri  text,
                client_secret  text,
                created_at     timestamptz NOT NULL DEFAULT now(),
                updated_at     timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant_id, provider_id)
            )
            """,
            """
            CREATE TABLE service_accounts (
                tenant_id     text NOT NULL,
                key_id        text NOT NULL,
                client_email  text NOT NULL,
                display_name  text,
                public_key    text NOT NULL,
                created_at    timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant_id, key_id)
            )
            """,
            // Tokens without a `kid` name their signer only by email.
            "CREATE INDEX service_accounts_email ON service_accounts (tenant_id, client_email)",
            "ALTER TABLE refresh_sessions ADD COLUMN developer_claims text",
        ])
}
