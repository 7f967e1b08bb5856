import Foundation
public import PostgresNIO

/// Where PostgreSQL is and how to log in.
///
/// Built from `database.url` (`postgres://user:password@host:port/name[?sslmode=…]`)
/// or from separate fields. TLS follows ``tlsMode``; unset, it is off for loopback
/// hosts and preferred elsewhere.
public struct DatabaseSettings: Sendable, Equatable {
    /// Whether connections use TLS (`database.tls`).
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never (loopback, Unix-like private networks).
        case disable
        /// When the server offers it. An attacker on the path can strip the offer:
        /// use ``require`` across networks you do not control.
        case prefer
        /// Always: a server without TLS, or whose certificate does not verify against the
        /// system's trust store for the host name, is refused (libpq's `verify-full`).
        case require

        /// Reads `database.tls` or libpq's `sslmode` (`allow` is `prefer`; `verify-ca` and
        /// `verify-full` are `require`, which always verifies).
        public init?(setting: String) {
            switch setting.lowercased() {
            case "disable": self = .disable
            case "allow", "prefer": self = .prefer
            case "require", "verify-ca", "verify-full": self = .require
            default: return nil
            }
        }
    }

    /// Host name or address.
    public var host: String
    /// TCP port.
    public var port: Int
    /// Role to log in as.
    public var user: String
    /// Password, if the server asks for one.
    public var password: String?
    /// Database name.
    public var database: String
    /// Size of the connection pool: every connection is opened at start and kept.
    public var maximumConnections: Int
    /// TLS; `nil`: off for loopback hosts, preferred elsewhere.
    public var tlsMode: TLSMode?
    /// How long a request waits for a connection and its database work together before it
    /// answers 503 `UNAVAILABLE` (`database.request_timeout`, default 5 s).
    public var requestTimeout: Duration = .seconds(5)

    /// Creates settings from fields.
    public init(
        host: String, port: Int = 5432, user: String, password: String? = nil, database: String,
        maximumConnections: Int = 20, tlsMode: TLSMode? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.maximumConnections = maximumConnections
        self.tlsMode = tlsMode
    }

    /// Parses a `postgres://` or `postgresql://` URL (with an optional `sslmode`); `nil`
    /// when it is not one.
    public init?(url: String, maximumConnections: Int = 20) {
        guard let components = URLComponents(string: url),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
        else { return nil }
        var tlsMode: TLSMode?
        if let mode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value {
            guard let parsed = TLSMode(setting: mode) else { return nil }
            tlsMode = parsed
        }
        let name = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.init(
            host: host, port: components.port ?? 5432, user: user, password: components.password,
            database: name.isEmpty ? user : name, maximumConnections: maximumConnections, tlsMode: tlsMode)
    }

    /// The TLS mode in effect.
    public var effectiveTLSMode: TLSMode {
        tlsMode ?? (["127.0.0.1", "localhost", "::1"].contains(host) ? .disable : .prefer)
    }

    var tls: PostgresClient.Configuration.TLS {
        switch effectiveTLSMode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    /// A single connection's configuration, for ``Database/probe()``.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch effectiveTLSMode {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// The pool configuration for `PostgresClient`.
    public var clientConfiguration: PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        // A fixed-size pool without keep-alive queries. postgres-nio starts a timer task each
        // time a connection goes back to the pool if the connection is above the minimum
        // (idle timeout) or keep-alive is on, and cancels it at the next lease: two thread
        // switches and a task group per query, ~10 % of a token refresh (BENCHMARKS.md).
        configuration.options.minimumConnections = maximumConnections
        configuration.options.keepAliveBehavior = nil
        configuration.options.connectTimeout = .seconds(5)
        // Every Portcullis query is a key lookup scoped by tenant. Plans made for the bound
        // values trust column statistics, which lag behind a tenant that is new or growing
        // fast: such a tenant looks like a single row, every index starting with `tenant_id`
        // ties, and PostgreSQL may pick one that scans the whole tenant. Generic plans
        // estimate from distinct counts instead and always take the index the keys name.
        //
        // Idle connections are kept alive by TCP instead of by queries: the server probes
        // its end after a minute of silence, so a NAT or firewall in between keeps the flow
        // open and a vanished peer is noticed (PostgreSQL ignores these on Unix sockets).
        configuration.options.additionalStartupParameters = [
            ("plan_cache_mode", "force_generic_plan"),
            ("tcp_keepalives_idle", "60"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "6"),
        ]
        return configuration
    }
}
