import Foundation
public import Logging
public import PortcullisCore
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
    /// When it was made.
    public let createTime: Date
    /// When it stopped signing; `nil` for the active key.
    public let retireTime: Date?

    /// Creates a value.
    public init(
        kid: String, algorithm: String, publicJWK: JSONValue, sealedPrivateKey: [UInt8], createTime: Date,
        retireTime: Date?
    ) {
        self.kid = kid
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.createTime = createTime
        self.retireTime = retireTime
    }
}

/// All SQL of the `signing_keys` table. At most one key per tenant is active
/// (a partial unique index enforces it); retired keys stay published until
/// every token they signed has expired.
public struct SigningKeyRepository: Sendable {
    let database: Database
    let logger: Logger

    /// A repository over the database.
    public init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The active key and the retired keys still published, active first.
    public func published(tenantId: String?) async throws -> [StoredSigningKey] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT kid, algorithm, public_jwk::text, sealed_private_key, created_at, retired_at FROM signing_keys
                WHERE tenant_id = \(tenantId ?? "") AND (retired_at IS NULL OR publish_until > now())
                ORDER BY retired_at IS NOT NULL, created_at DESC
                """, logger: logger)
            return try await Self.decode(rows)
        }
    }

    /// Every key of the tenant, newest first (for `GET …/keys`).
    public func all(tenantId: String?) async throws -> [StoredSigningKey] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT kid, algorithm, public_jwk::text, sealed_private_key, created_at, retired_at FROM signing_keys
                WHERE tenant_id = \(tenantId ?? "") ORDER BY created_at DESC
                """, logger: logger)
            return try await Self.decode(rows)
        }
    }

    /// Makes `key` the active key: the previous one is retired and stays published
    /// for `publishRetiredSeconds`. With `onlyIfNone`, does nothing when a key is
    /// already active (first use, racing instances). Returns whether it inserted.
    @discardableResult
    public func activate(
        tenantId: String?, key: StoredSigningKey, publishRetiredSeconds: Int, onlyIfNone: Bool, actor: String
    ) async throws -> Bool {
        try await database.withTransaction { connection in
            let tenant = tenantId ?? ""
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext('signing_keys:' || \(tenant)))", logger: logger)
            if onlyIfNone {
                let existing = try await connection.query(
                    "SELECT 1 FROM signing_keys WHERE tenant_id = \(tenant) AND retired_at IS NULL", logger: logger)
                for try await _ in existing.decode(Int.self) { return false }
            }
            try await connection.query(
                """
                UPDATE signing_keys SET retired_at = now(), publish_until = now() + make_interval(secs => \(publishRetiredSeconds))
                WHERE tenant_id = \(tenant) AND retired_at IS NULL
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO signing_keys (tenant_id, kid, algorithm, public_jwk, sealed_private_key)
                VALUES (\(tenant), \(key.kid), \(key.algorithm), \(key.publicJWK.serialized())::jsonb,
                        \(ByteBuffer(bytes: key.sealedPrivateKey)))
                """, logger: logger)
            if !onlyIfNone {
                try await AuditLogRepository.record(
                    AuditEntry(tenantId: tenantId, actor: actor, action: "keys.rotate", target: "keys/\(key.kid)"),
                    on: connection, logger: logger)
            }
            try await InvalidationEvent.signingKeys(tenantId: tenantId).send(on: connection, logger: logger)
            return true
        }
    }

    /// Tenants (`nil` = project) whose active key is older than `maximumAge` seconds.
    public func tenantsDueForRotation(maximumAge: Int) async throws -> [String?] {
        try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT tenant_id FROM signing_keys
                WHERE retired_at IS NULL AND created_at < now() - make_interval(secs => \(maximumAge))
                """, logger: logger)
            var due: [String?] = []
            for try await tenant in rows.decode(String.self) { due.append(tenant.isEmpty ? nil : tenant) }
            return due
        }
    }

    private static func decode(_ rows: PostgresRowSequence) async throws -> [StoredSigningKey] {
        var keys: [StoredSigningKey] = []
        for try await (kid, algorithm, jwk, sealed, created, retired) in rows.decode(
            (String, String, String, ByteBuffer, Date, Date?).self)
        {
            keys.append(
                StoredSigningKey(
                    kid: kid, algorithm: algorithm, publicJWK: try JSONValue.parse(Array(jwk.utf8)),
                    sealedPrivateKey: Array(sealed.readableBytesView), createTime: created, retireTime: retired))
        }
        return keys
    }
}
