public import Foundation
public import Logging
public import PortcullisCore
public import PortcullisJSON
import PostgresNIO

/// A signing key as stored: the private half only sealed under the master key.
public struct StoredSigningKey: Sendable, Equatable {
    /// The `kid`.
    public let kid: String
    /// `RS256`, `ES256` or `EdDSA`.
    public let algorithm: String
    /// The public JWK.
    public let publicJWK: JSONValue
    /// AES-GCM sealed private key.
    public let sealedPrivateKey: [UInt8]
    /// When it was made (and published).
    public let createTime: Date
    /// When it starts signing: its creation, or later for a key a scheduled rotation published ahead.
    public let signsFrom: Date
    /// When it stops (or stopped) signing; `nil` for the newest key.
    public let retireTime: Date?

    /// Creates a value.
    public init(
        kid: String, algorithm: String, publicJWK: JSONValue, sealedPrivateKey: [UInt8], createTime: Date,
        signsFrom: Date? = nil, retireTime: Date?
    ) {
        self.kid = kid
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.createTime = createTime
        self.signsFrom = signsFrom ?? createTime
        self.retireTime = retireTime
    }

    /// Where the key stands at `now`.
    ///
    /// Retirement is judged first: a key an operator's rotation withdrew before it ever
    /// signed (a scheduled rotation's next key) is retired, not pending.
    ///
    /// Compared to the microsecond, the resolution PostgreSQL stores: a time read back from
    /// the table may come back a fraction of a microsecond off the `Date` it was written
    /// from, which must not make a key that signs from `now` look pending at `now`.
    public func state(at now: Date) -> State {
        let now = Timestamp(now)
        if let retireTime, Timestamp(retireTime) <= now { return .retired }
        if Timestamp(signsFrom) > now { return .pending }
        return .active
    }

    /// A key's place in its lifecycle (`GET …/keys`' `state`).
    public enum State: String, Sendable {
        /// Published, not signing yet (a scheduled rotation's next key).
        case pending = "PENDING"
        /// Signing.
        case active = "ACTIVE"
        /// No longer signing; published until the tokens it signed have expired.
        case retired = "RETIRED"
    }
}

/// How a new signing key takes over.
public enum KeyActivation: Sendable, Equatable {
    /// The tenant's first key: only if it has none.
    case first
    /// At once (an operator's rotation, e.g. after a leak); a pending key is dropped.
    case immediately
    /// After `leadSeconds` (a scheduled rotation), and only if the newest key is still
    /// older than `dueAfterSeconds` (another instance may have rotated meanwhile). The
    /// key is published at once, so verifiers that cache the JWKS know it before it signs.
    case scheduled(leadSeconds: Int, dueAfterSeconds: Int)
}

/// All SQL of the `signing_keys` table. At most one key per tenant is the newest
/// (`retired_at IS NULL`, a partial unique index enforces it): it signs, or will once
/// its `signs_from` comes; retired keys stay published until every token they
/// signed has expired.
public struct SigningKeyRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Every key still published at `now`: pending, active, and retired ones whose tokens
    /// may still be live; in the order they sign (the newest last).
    ///
    /// Every time in this table is the application's clock (`now` parameters), never the
    /// database's, so one clock decides which key signs.
    public func published(tenant: TenantScope, at now: Date) async throws -> [StoredSigningKey] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM signing_keys
                WHERE tenant_id = \(tenant.key) AND (retired_at IS NULL OR retired_at > \(now) OR publish_until > \(now))
                ORDER BY signs_from, created_at
                """, logger: logger)
            return try await Self.decode(rows)
        }
    }

    /// Every key of the tenant, newest first (for `GET …/keys`).
    public func all(tenant: TenantScope) async throws -> [StoredSigningKey] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM signing_keys
                WHERE tenant_id = \(tenant.key) ORDER BY signs_from DESC, created_at DESC
                """, logger: logger)
            return try await Self.decode(rows)
        }
    }

    /// Adds `key` as the tenant's newest key, taking over as `activation` says; the key
    /// it replaces keeps being published for `publishRetiredSeconds` after it stops
    /// signing. Serialised per tenant by an advisory lock, so racing instances rotate once.
    ///
    /// - Returns: whether the key was added (`false` when `activation`'s condition no longer held).
    @discardableResult
    public func activate(
        tenant: TenantScope, key: StoredSigningKey, activation: KeyActivation, publishRetiredSeconds: Int, actor: String,
        at now: Date
    ) async throws -> Bool {
        try await database.withTransaction { transaction in
            try await transaction.query(
                "SELECT pg_advisory_xact_lock(hashtext('signing_keys:' || \(tenant.key)))", logger: logger)
            if tenant != .project {
                // No foreign key to the tenant (the project's keys have none): held like one, so a key
                // is never made for a tenant whose deletion committed (or waits for this one to delete it).
                let exists = try await transaction.query(
                    "SELECT 1 FROM tenants WHERE tenant_id = \(tenant.key) FOR SHARE", logger: logger)
                var found = false
                for try await _ in exists.decode(Int.self) { found = true }
                guard found else { throw Conflict.tenantMissing }
            }
            let signsFrom: Date
            switch activation {
            case .first:
                let existing = try await transaction.query(
                    "SELECT 1 FROM signing_keys WHERE tenant_id = \(tenant.key) AND retired_at IS NULL", logger: logger)
                for try await _ in existing.decode(Int.self) { return false }
                // It replaces nothing, so it signs "since always": a request that read the clock
                // before this one, or an instance whose clock is behind, must not see it as pending.
                signsFrom = Date(timeIntervalSince1970: 0)
            case .immediately:
                // Every key still signing or about to stop, the pending one included, retires now;
                // a key that never signed needs no publishing.
                try await transaction.query(
                    """
                    UPDATE signing_keys SET retired_at = \(now), publish_until = CASE WHEN signs_from <= \(now)
                        THEN \(now.addingTimeInterval(Double(publishRetiredSeconds))) ELSE \(now) END
                    WHERE tenant_id = \(tenant.key) AND (retired_at IS NULL OR retired_at > \(now))
                    """, logger: logger)
                signsFrom = now
            case .scheduled(let leadSeconds, let dueAfterSeconds):
                let due = try await transaction.query(
                    """
                    SELECT 1 FROM signing_keys WHERE tenant_id = \(tenant.key) AND retired_at IS NULL
                      AND \(unescaped: Self.signingSince) < \(now.addingTimeInterval(-Double(dueAfterSeconds)))
                    """, logger: logger)
                var isDue = false
                for try await _ in due.decode(Int.self) { isDue = true }
                guard isDue else { return false }
                try await transaction.query(
                    """
                    UPDATE signing_keys SET retired_at = \(now.addingTimeInterval(Double(leadSeconds))),
                        publish_until = \(now.addingTimeInterval(Double(leadSeconds + publishRetiredSeconds)))
                    WHERE tenant_id = \(tenant.key) AND retired_at IS NULL
                    """, logger: logger)
                signsFrom = now.addingTimeInterval(Double(leadSeconds))
            }
            try await transaction.query(
                """
                INSERT INTO signing_keys (tenant_id, kid, algorithm, public_jwk, sealed_private_key, created_at, signs_from)
                VALUES (\(tenant.key), \(key.kid), \(key.algorithm), \(key.publicJWK.serialized())::jsonb,
                        \(ByteBuffer(bytes: key.sealedPrivateKey)), \(now), \(signsFrom))
                """, logger: logger)
            if activation != .first {
                try await AuditLogRepository.record(
                    AuditEntry(tenantId: tenant.tenantId, actor: actor, action: "keys.rotate", target: "keys/\(key.kid)"),
                    in: transaction, logger: logger)
            }
            try await transaction.announce(.signingKeys(tenant), logger: logger)
            return true
        }
    }

    /// Tenants (`nil` = project) whose newest key signs and is older than `maximumAge` seconds at `now`.
    public func tenantsDueForRotation(maximumAge: Int, at now: Date) async throws -> [String?] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT tenant_id FROM signing_keys
                WHERE retired_at IS NULL AND \(unescaped: Self.signingSince) < \(now.addingTimeInterval(-Double(maximumAge)))
                """, logger: logger)
            var due: [String?] = []
            for try await tenant in rows.decode(String.self) { due.append(tenant.isEmpty ? nil : tenant) }
            return due
        }
    }

    /// Since when a key has been the one signing, for its age: a tenant's first key signs
    /// "since always" (`signs_from` at the epoch) but is as old as its creation.
    private static let signingSince = "greatest(created_at, signs_from)"

    private static let columns = "kid, algorithm, public_jwk::text, sealed_private_key, created_at, signs_from, retired_at"

    private static func decode(_ rows: PostgresRowSequence) async throws -> [StoredSigningKey] {
        var keys: [StoredSigningKey] = []
        for try await (kid, algorithm, jwk, sealed, created, signsFrom, retired) in rows.decode(
            (String, String, String, ByteBuffer, Date, Date, Date?).self)
        {
            keys.append(
                StoredSigningKey(
                    kid: kid, algorithm: algorithm, publicJWK: try JSONValue.parse(Array(jwk.utf8)),
                    sealedPrivateKey: Array(sealed.readableBytesView), createTime: created, signsFrom: signsFrom,
                    retireTime: retired))
        }
        return keys
    }
}
