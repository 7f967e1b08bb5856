extension Migration {
    /// `accounts:query` sorted by creation time reads a page from an index instead of sorting
    /// the whole tenant (3.4 s at 10,000,000 users; BENCHMARKS.md). Its columns never change,
    /// so an update stays a HOT update wherever the row's page has room. Built concurrently:
    /// writes to `users` go on meanwhile; a build cut short leaves an invalid index, which the
    /// next run drops first.
    static let usersCreatedAt = Migration(
        version: 12, name: "users_created_at", transactional: false,
        statements: [
            "DROP INDEX CONCURRENTLY IF EXISTS users_created_at",
            "CREATE INDEX CONCURRENTLY users_created_at ON users (tenant_id, created_at, uid)",
        ])
}
