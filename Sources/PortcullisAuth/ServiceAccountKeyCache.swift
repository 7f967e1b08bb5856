public import PortcullisCore
public import PortcullisCrypto
public import PortcullisStore

/// Each instance's copy of the service-account keys that verify custom tokens, found by
/// (tenant, `kid`) or, for tokens without one, by (tenant, signer email); PEMs are parsed
/// once per fill. Absences are cached too, so a stream of tokens naming made-up keys costs
/// one lookup each, not one per request. A `NOTIFY` about a tenant's service accounts (or
/// the tenant's deletion) drops that tenant's entries on every instance.
public final class ServiceAccountKeyCache: InvalidationSubscriber {
    /// A key ready to verify, with the account it belongs to.
    public struct Entry: Sendable {
        /// The service account.
        public let account: ServiceAccount
        /// Its public key, parsed.
        public let key: VerificationKey
    }

    private enum Lookup: Hashable {
        case kid(tenant: String, kid: String)
        case email(tenant: String, email: String)

        var tenant: String {
            switch self {
            case .kid(let tenant, _), .email(let tenant, _): tenant
            }
        }
    }

    private let accounts: ServiceAccountRepository
    private let entries = GuardedCache<Lookup, [Entry]>(limit: 100_000)

    /// A cache in front of the service-account table.
    public init(accounts: ServiceAccountRepository) {
        self.accounts = accounts
    }

    /// The tenant's (`nil`: the project's) key with this `kid`, or `nil`.
    public func key(tenant: TenantScope, kid: String) async throws -> Entry? {
        try await entries.value(for: .kid(tenant: tenant.key, kid: kid)) {
            try await accounts.find(tenant: tenant, keyId: kid).flatMap(Self.entry).map { [$0] } ?? []
        }.first
    }

    /// The tenant's (`nil`: the project's) keys of the signer with this email, oldest first.
    public func keys(tenant: TenantScope, email: String) async throws -> [Entry] {
        try await entries.value(for: .email(tenant: tenant.key, email: email)) {
            try await accounts.find(tenant: tenant, clientEmail: email).compactMap(Self.entry)
        }
    }

    /// Drops a tenant's keys.
    private func drop(tenant: TenantScope) {
        let tenant = tenant.key
        entries.invalidate { $0.tenant == tenant }
    }

    /// A stored key that no longer parses verifies nothing (it was checked when registered).
    private static func entry(_ account: ServiceAccount) -> Entry? {
        VerificationKey(rsaPEM: account.publicKeyPEM, kid: account.keyId).map { Entry(account: account, key: $0) }
    }

    public func invalidate(_ event: InvalidationEvent) {
        switch event {
        case .serviceAccounts(let tenant): drop(tenant: tenant)
        case .tenant(let id, let version) where version == 0: drop(tenant: .tenant(id))
        default: return
        }
    }

    public func invalidateAll() {
        entries.invalidateAll()
    }
}
