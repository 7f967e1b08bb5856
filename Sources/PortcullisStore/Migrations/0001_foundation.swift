extension Migration {
    /// Tenants, project config, admin keys and the audit log.
    ///
    /// Tenant-owned tables lead with `tenant_id` so they can be distributed by
    /// tenant (Citus); `admin_keys` and `audit_log` span the project and hold
    /// `NULL` there for project-level rows.
    static let foundation = Migration(
        version: 1, name: "foundation",
        statements: [
            """
            CREATE TABLE tenants (
                tenant_id   text PRIMARY KEY,
                settings    jsonb NOT NULL,
                version     bigint NOT NULL DEFAULT 1,
                created_at  timestamptz NOT NULL DEFAULT now(),
                updated_at  timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE project_config (
                project_id  text PRIMARY KEY,
                settings    jsonb NOT NULL,
                version     bigint NOT NULL DEFAULT 1,
                updated_at  timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE admin_keys (
                key_id        text PRIMARY KEY,
                tenant_id     text REFERENCES tenants (tenant_id) ON DELETE CASCADE,
                display_name  text NOT NULL,
                secret_hash   bytea NOT NULL,
                created_at    timestamptz NOT NULL DEFAULT now(),
                last_used_at  timestamptz,
                revoked_at    timestamptz
            )
            """,
            "CREATE INDEX admin_keys_by_tenant ON admin_keys (tenant_id) WHERE revoked_at IS NULL",
            """
            CREATE TABLE audit_log (
                event_id     bigserial PRIMARY KEY,
                tenant_id    text,
                occurred_at  timestamptz NOT NULL DEFAULT now(),
                actor        text NOT NULL,
                action       text NOT NULL,
                target       text NOT NULL,
                before       jsonb,
                after        jsonb
            )
            """,
            "CREATE INDEX audit_log_by_tenant ON audit_log (tenant_id, event_id)",
        ])
}
