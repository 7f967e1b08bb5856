/// One versioned schema change: plain SQL, applied once, in order.
///
/// The SQL lives in Swift string literals (one file per migration) so the
/// daemon is a single self-contained binary with nothing to install beside it.
public struct Migration: Sendable {
    /// Strictly increasing version.
    public let version: Int
    /// Short name, recorded with the version.
    public let name: String
    /// The statements, one SQL statement each, run in order in one transaction
    /// (the extended query protocol takes a single statement at a time).
    public let statements: [String]

    /// Every migration, in order.
    public static let all: [Migration] = [
        .foundation, .accounts, .refreshSessions, .userProviders, .preciseRevocation, .federation, .emailActions,
        .actionCodeBinding, .retiredTenantIds, .passwordUpdatedAt, .providerRevocationURI,
    ]

    /// The version a current schema has.
    public static var latestVersion: Int { all.last?.version ?? 0 }
}
