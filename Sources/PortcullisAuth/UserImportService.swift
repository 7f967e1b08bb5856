public import PortcullisCore
import PortcullisCrypto
public import PortcullisJSON
public import PortcullisStore

/// Imports users with their password hashes (`accounts:batchCreate`, `portcullis users
/// import`): a SaaS moving off Firebase keeps every password. Hashes are stored as the
/// source made them (nothing is hashed here), verified with their own algorithm on
/// sign-in, and replaced by the tenant's scrypt after the first successful one.
public struct UserImportService: Sendable {
    let users: UserRepository
    let tenants: TenantSettingsCache
    let clock: any WallClock

    /// A service writing through `users` (each import's audit record in its transaction).
    public init(users: UserRepository, tenants: TenantSettingsCache, clock: any WallClock) {
        self.users = users
        self.tenants = tenants
        self.clock = clock
    }

    /// One user's failure, by its index in the request.
    public struct Failure: Sendable, Equatable {
        /// The index in the request.
        public var index: Int
        /// The error's wire message (`EMAIL_EXISTS`, `INVALID_EMAIL`, …).
        public var message: String
    }

    /// Imports `records` (at most `UserImportPolicy.maximumUsersPerRequest`) into the tenant.
    /// Each user is written whole or not at all; the refused ones come back by index.
    ///
    /// - Parameters:
    /// - tenant: the tenant, or the project's users.
    ///   - records: the users in `accounts:batchCreate`'s format, as sent.
    ///   - hashConfig: how the records' `passwordHash`es were made; required when
    ///     any record has one (`MISSING_HASH_ALGORITHM`).
    ///   - actor: who imports, for the audit record.
    public func importUsers(
        tenant: TenantScope, records: [JSONValue], hashConfig: PasswordHashConfig?, actor: String
    ) async throws -> [Failure] {
        _ = try await tenants.settings(tenant: tenant)
        guard !records.isEmpty else { throw AuthError(.invalidArgument, detail: "users is empty") }
        guard records.count <= UserImportPolicy.maximumUsersPerRequest else {
            throw AuthError(.invalidArgument, detail: "at most \(UserImportPolicy.maximumUsersPerRequest) users per request")
        }
        let now = clock.now().date
        var failures: [Int: AuthError] = [:]
        var parsed: [(index: Int, user: ImportedUser)] = []
        for (index, record) in records.enumerated() {
            do {
                parsed.append((index, try UserImportPolicy.parse(record, tenantId: tenant.tenantId, now: now)))
            } catch {
                failures[index] = error
            }
        }
        if hashConfig == nil, parsed.contains(where: { $0.user.passwordHash != nil }) {
            throw AuthError(.missingHashAlgorithm)
        }
        failures.merge(UserImportPolicy.duplicates(in: parsed)) { first, _ in first }
        var rows: [UserRepository.ImportRow] = []
        for (index, imported) in parsed where failures[index] == nil {
            do throws(AuthError) {
                var stored = try imported.passwordHash.map { hash throws(AuthError) -> String in
                    guard let hashConfig else { throw AuthError(.missingHashAlgorithm) }
                    return try StoredPasswordHash.imported(config: hashConfig, passwordHash: hash, salt: imported.salt)
                }
                if let own = imported.storedPasswordHash {
                    guard PasswordHasher.isVerifiable(own) else {
                        throw AuthError(.invalidPasswordHash, detail: "portcullisPasswordHash is not a hash Portcullis stores")
                    }
                    stored = own
                }
                rows.append(.init(index: index, user: imported.user, passwordHash: stored))
            } catch {
                failures[index] = error
            }
        }
        let refusedBefore = failures
        let candidates = rows.map(\.index)
        let algorithm = hashConfig.map { JSONValue.string($0.algorithm.rawValue) } ?? .null
        let written = try await users.importUsers(tenant: tenant, rows) { refused in
            let all = refusedBefore.merging(refused.mapValues(AuthError.init)) { first, _ in first }
            let imported = candidates.count { all[$0] == nil }
            guard imported > 0 else { return nil }
            return AuditEntry(
                tenantId: tenant.tenantId, actor: actor, action: "user.import",
                target: tenant.tenantId.map { "tenants/\($0)/accounts" } ?? "accounts",
                after: .object([
                    "imported": .integer(Int64(imported)), "failed": .integer(Int64(all.count)), "hashAlgorithm": algorithm,
                ]))
        }
        failures.merge(written.mapValues(AuthError.init)) { first, _ in first }
        return failures.sorted { $0.key < $1.key }.map { Failure(index: $0.key, message: $0.value.message) }
    }
}
