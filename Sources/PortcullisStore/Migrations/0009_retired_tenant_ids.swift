extension Migration {
    /// Deleted tenants' ids, never handed out again (DESIGN.md §5): a token, link, webhook
    /// secret or service-account file a deleted tenant's users or admins kept names its id,
    /// and must never come to mean a new tenant. Tenants deleted before this migration are
    /// found in the audit log. (Their scoped admin keys went with them: `admin_keys`
    /// references `tenants` with `ON DELETE CASCADE`.)
    static let retiredTenantIds = Migration(
        version: 9, name: "retired_tenant_ids",
        statements: [
            """
            CREATE TABLE retired_tenant_ids (
                tenant_id   text PRIMARY KEY,
                deleted_at  timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            INSERT INTO retired_tenant_ids (tenant_id)
            SELECT DISTINCT tenant_id FROM audit_log
            WHERE action = 'tenant.delete' AND tenant_id IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.tenant_id = audit_log.tenant_id)
            """,
        ])
}
