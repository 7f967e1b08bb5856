import Foundation
import Logging
public import PortcullisCore
import PostgresNIO

/// Reads of one user: by uid, by email (a prepared statement: every password sign-in
/// starts there), and locked for update in the caller's transaction.
extension UserRepository {
    /// The user and their password hash, or `nil`.
    public func find(tenant: TenantScope, uid: String) async throws -> (user: User, passwordHash: String?)? {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.columns) FROM users WHERE tenant_id = \(tenant.key) AND uid = \(uid)",
                logger: logger)
            return try await Self.decode(rows, tenant: tenant).first
        }
    }

    /// The user with this email (case-insensitive), or `nil`.
    public func find(tenant: TenantScope, email: String) async throws -> (user: User, passwordHash: String?)? {
        try await database.withConnection { connection in
            for try await found in try await connection.execute(
                FindByEmail(tenant: tenant.key, email: email), logger: logger)
            {
                return found
            }
            return nil
        }
    }

    /// Every password sign-in starts here: prepared once per connection, so PostgreSQL
    /// parses and plans it once rather than on every sign-in.
    private struct FindByEmail: PostgresPreparedStatement {
        // PostgreSQL cuts names at 63 bytes; the default (the type's full Swift name) would collide.
        static let name = "portcullis_find_user_by_email"
        static let sql = "SELECT \(UserRepository.columns) FROM users WHERE tenant_id = $1 AND lower(email) = lower($2)"
        static let bindingDataTypes: [PostgresDataType] = [.text, .text]

        let tenant: String
        let email: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(tenant)
            bindings.append(email)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> (user: User, passwordHash: String?)? {
            try UserRepository.decode(row, tenant: TenantScope(tenant)).map { (user: $0.0, passwordHash: $0.1) }
        }
    }

    /// Locks the user's row `FOR UPDATE` in `transaction` and reads the user as it then
    /// stands; `nil` when absent or when `precondition` does not hold.
    ///
    /// Two statements: a statement that waits for a row lock re-reads that row alone, not its
    /// subqueries, so the user (with its links) is read by a statement of its own once the
    /// lock is held, whose snapshot includes every change committed before; `precondition`
    /// is judged on that read.
    public func lock(
        tenant: TenantScope, uid: String, requiring precondition: Precondition = .none, in transaction: Transaction
    ) async throws -> User? {
        let locked = try await transaction.query(
            "SELECT uid FROM users WHERE tenant_id = \(tenant.key) AND uid = \(uid) FOR UPDATE", logger: logger)
        var found = false
        for try await _ in locked.decode(String.self) { found = true }
        guard found, let user = try await Self.read(uid, tenant: tenant, in: transaction, logger: logger),
            precondition.holds(for: user)
        else { return nil }
        return user
    }

    /// Locks the row of the user with this email (case-insensitive) as ``lock(tenant:uid:requiring:in:)`` does.
    public func lock(tenant: TenantScope, email: String, in transaction: Transaction) async throws -> User? {
        let locked = try await transaction.query(
            "SELECT uid FROM users WHERE tenant_id = \(tenant.key) AND lower(email) = lower(\(email)) FOR UPDATE",
            logger: logger)
        var uid: String?
        for try await found in locked.decode(String.self) { uid = found }
        guard let uid else { return nil }
        return try await Self.read(uid, tenant: tenant, in: transaction, logger: logger)
    }

    /// The user as stored, read in `transaction`.
    static func read(_ uid: String, tenant: TenantScope, in transaction: Transaction, logger: Logger) async throws -> User? {
        let rows = try await transaction.query(
            "SELECT \(unescaped: columns) FROM users WHERE tenant_id = \(tenant.key) AND uid = \(uid)", logger: logger)
        return try await decode(rows, tenant: tenant).first?.0
    }
}
