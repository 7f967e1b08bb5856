extension Migration {
    /// `accounts:query` sorted by email lists the users with an email from `users_email_unique`,
    /// in its order, and after them the users without one (anonymous and custom-token users,
    /// say) in uid order from this index, which holds only them: each part of a page is read
    /// from an index instead of the whole tenant sorted (BENCHMARKS.md). The email index already
    /// covers the column its predicate reads, so no update that was HOT stops being so. Built
    /// concurrently, as `users_created_at` is.
    static let usersWithoutEmail = Migration(
        version: 14, name: "users_without_email", transactional: false,
        statements: [
            "DROP INDEX CONCURRENTLY IF EXISTS users_without_email",
            "CREATE INDEX CONCURRENTLY users_without_email ON users (tenant_id, uid) WHERE email IS NULL",
        ])
}
