import Foundation
import NIOCore
import PostgresNIO

/// Where PostgreSQL is and how to log in.
///
/// Built from `database.url` (`postgres://user:password@host:port/name[?sslmode=…]`, several
/// hosts as libpq takes them: `postgresql://u@h1:5432,h2:5433/name?target_session_attrs=read-write`)
/// or from separate fields. With several hosts, the daemon writes through the one that
/// accepts writes and finds the new one after a failover (``Database``). TLS follows
/// ``tlsMode``; unset, it is off when every host is loopback and preferred otherwise.
public struct DatabaseSettings: Sendable, Equatable {
    /// One server: a host name or address, and a TCP port.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// Host name or address.
        public var host: String
        /// TCP port.
        public var port: Int

        /// An endpoint.
        public init(host: String, port: Int = 5432) {
            self.host = host
            self.port = port
        }

        /// Reads `host[:port]` (`[v6]:port` for an IPv6 address), as a URL's host list and
        /// `database.hosts` write it; `nil` when malformed.
        public init?(_ text: some StringProtocol, defaultPort: Int = 5432) {
            let text = Substring(text)
            var host: Substring
            var port: Substring?
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else { return nil }
                host = text[text.index(after: text.startIndex)..<close]
                let after = text[text.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else { return nil }
                    port = after.dropFirst()
                }
            } else {
                let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                host = parts[0]
                port = parts.count > 1 ? parts[1] : nil
            }
            guard !host.isEmpty, let decoded = String(host).removingPercentEncoding else { return nil }
            guard let port else {
                self.init(host: decoded, port: defaultPort)
                return
            }
            guard let number = Int(port), (1...65535).contains(number) else { return nil }
            self.init(host: decoded, port: number)
        }

        /// `host:port` (`[v6]:port` for an IPv6 address), as logs and errors name it.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

        var isLoopback: Bool { ["127.0.0.1", "localhost", "::1"].contains(host) }
    }

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

    /// The servers, in the order they are tried (one, or a primary and its standbys).
    public var endpoints: [Endpoint]
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

    /// Creates settings for one server from fields.
    public init(
        host: String, port: Int = 5432, user: String, password: String? = nil, database: String,
        maximumConnections: Int = 20, tlsMode: TLSMode? = nil
    ) {
        self.init(
            endpoints: [Endpoint(host: host, port: port)], user: user, password: password, database: database,
            maximumConnections: maximumConnections, tlsMode: tlsMode)
    }

    /// Creates settings for several servers (a primary and its standbys) from fields.
    public init(
        endpoints: [Endpoint], user: String, password: String? = nil, database: String, maximumConnections: Int = 20,
        tlsMode: TLSMode? = nil
    ) {
        self.endpoints = endpoints
        self.user = user
        self.password = password
        self.database = database
        self.maximumConnections = maximumConnections
        self.tlsMode = tlsMode
    }

    /// Parses a `postgres://` or `postgresql://` URL, with one host or several
    /// (`h1:p1,h2:p2`, `[v6]:p`), an optional `sslmode` and an optional
    /// `target_session_attrs` (`read-write`, `primary` or `any`: the daemon always writes
    /// through the server that accepts writes); `nil` when it is not one.
    public init?(url: String, maximumConnections: Int = 20) {
        guard let separator = url.range(of: "://"), ["postgres", "postgresql"].contains(url[..<separator.lowerBound])
        else { return nil }
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return nil }
        let userInfo = authority[..<at].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let user = userInfo.first.flatMap({ String($0).removingPercentEncoding }), !user.isEmpty else { return nil }
        let password = userInfo.count > 1 ? String(userInfo[1]).removingPercentEncoding : nil
        var endpoints: [Endpoint] = []
        for host in authority[authority.index(after: at)...].split(separator: ",", omittingEmptySubsequences: false) {
            guard let endpoint = Endpoint(host) else { return nil }
            endpoints.append(endpoint)
        }
        // Everything after the authority is an ordinary URL's path and query.
        guard let components = URLComponents(string: "postgres://x" + rest[authorityEnd...]) else { return nil }
        var tlsMode: TLSMode?
        for item in components.queryItems ?? [] {
            switch (item.name, item.value ?? "") {
            case ("sslmode", let mode):
                guard let parsed = TLSMode(setting: mode) else { return nil }
                tlsMode = parsed
            case ("target_session_attrs", let attributes):
                guard ["read-write", "primary", "any"].contains(attributes) else { return nil }
            default:
                continue
            }
        }
        let name = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.init(
            endpoints: endpoints, user: user, password: password, database: name.isEmpty ? user : name,
            maximumConnections: maximumConnections, tlsMode: tlsMode)
    }

    /// The first server's host: the only one of a single-server setting.
    public var host: String { endpoints[0].host }
    /// The first server's port.
    public var port: Int { endpoints[0].port }

    /// The TLS mode in effect.
    public var effectiveTLSMode: TLSMode {
        tlsMode ?? (endpoints.allSatisfy(\.isLoopback) ? .disable : .prefer)
    }

    var tls: PostgresClient.Configuration.TLS {
        switch effectiveTLSMode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    /// A single connection's configuration, for checking whether `endpoint` accepts writes.
    func connectionConfiguration(for endpoint: Endpoint, connectTimeout: Duration) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch effectiveTLSMode {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: endpoint.host, port: endpoint.port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = TimeAmount(connectTimeout)
        return configuration
    }

    /// The pool configuration for `PostgresClient`, connecting to `endpoint`.
    func clientConfiguration(for endpoint: Endpoint) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: endpoint.host, port: endpoint.port, username: user, password: password, database: database, tls: tls)
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
        // JIT compilation is off: a generic plan's estimates grow with the tenant (a keyset page
        // of `LIMIT $n` is costed at a third of it), and past PostgreSQL's JIT thresholds every
        // execution compiled itself first: 100 ms of LLVM for a 7 ms batchGet page, and as much
        // for a sign-in's lookup by email, at 10,000,000 users (BENCHMARKS.md). Key lookups
        // never gain from it.
        //
        // Idle connections are kept alive by TCP instead of by queries: the server probes
        // its end after a minute of silence, so a NAT or firewall in between keeps the flow
        // open and a vanished peer is noticed (PostgreSQL ignores these on Unix sockets).
        configuration.options.additionalStartupParameters = [
            ("plan_cache_mode", "force_generic_plan"), ("jit", "off"),
            ("tcp_keepalives_idle", "60"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "6"),
        ]
        return configuration
    }
}
