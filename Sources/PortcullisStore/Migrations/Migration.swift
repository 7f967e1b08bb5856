/// One versioned schema change: plain SQL, applied once, in order.
///
/// The SQL lives in Swift string literals (one file per migration) so the
/// daemon is a single self-contained binary with nothing to install beside it.
public struct Migration: Sendable {
    /// Strictly increasing version.
    public let version: Int
    /// Short name, recorded with the version.
    public let name: String
    /// The statements, one SQL statement each, run in order (the extended query protocol
    /// takes a single statement at a time).
    public let statements: [String]
    /// Whether the statements run in one transaction with the version's record (the rule).
    /// `false` for what PostgreSQL refuses in a transaction — `CREATE INDEX CONCURRENTLY`,
    /// which builds an index on a large table without blocking its writes: each statement
    /// then commits on its own, the version last, so a migration cut short runs again from
    /// its first statement and must be written to allow it.
    public let transactional: Bool

    init(version: Int, name: String, transactional: Bool = true, statements: [String]) {
        self.version = version
        self.name = name
        self.transactional = transactional
        self.statements = statements
    }

    /// Every migration, in order.
    public static let all: [Migration] = [
        .foundation, .accounts, .refreshSessions, .userProviders, .preciseRevocation, .federation, .emailActions,
        .actionCodeBinding, .retiredTenantIds, .passwordUpdatedAt, .providerRevocationURI, .usersCreatedAt, .roomForUpdates,
        .usersWithoutEmail,
    ]

    /// The version a current schema has.
    public static var latestVersion: Int { all.last?.version ?? 0 }
}
