import Logging
import NIOPosix
import PostgresNIO

extension Database {
    /// What one server said when asked whether it takes writes.
    enum ServerCheck: Sendable {
        /// It answered `transaction_read_only = off`: a primary, started at `since` (its
        /// postmaster's start time, which tells two addresses of one server from two servers).
        case writable(since: String)
        /// It answered `on`: a standby, or a primary being demoted.
        case readOnly
        /// It could not be reached in time, refused the login, or failed the query.
        case unreachable(any Error)

        /// The check in words, for logs and ``DatabaseUnreachable``.
        func describe(tls: DatabaseSettings.TLSMode) -> String {
            switch self {
            case .writable: "accepts writes"
            case .readOnly: "read-only (a standby, or in recovery)"
            case .unreachable(let error): DatabaseUnreachable.describe(error, tls: tls)
            }
        }
    }

    /// How long one check may take, connecting included: a frozen server must not hold
    /// the search up for long, and a reachable one answers in milliseconds.
    static let checkTimeout = Duration.seconds(2)

    /// Asks `endpoint`, on a connection of its own, whether it takes writes (libpq's
    /// `target_session_attrs=read-write` test: `transaction_read_only`), and since when it runs.
    func check(_ endpoint: DatabaseSettings.Endpoint) async -> ServerCheck {
        do {
            let configuration = try settings.connectionConfiguration(for: endpoint, connectTimeout: Self.checkTimeout)
            let (readOnly, since) = try await CallDeadline.run(within: Self.checkTimeout) { [logger] in
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger
                ).get()
                let answer: Result<(String, String), any Error>
                do {
                    var value = ("", "")
                    let rows = try await connection.query(
                        "SELECT current_setting('transaction_read_only'), pg_postmaster_start_time()::text", logger: logger)
                    for try await row in rows.decode((String, String).self) { value = row }
                    answer = .success(value)
                } catch {
                    answer = .failure(error)
                }
                // Closing a connection we are done with cannot change the answer.
                try? await connection.close()
                return try answer.get()
            } expire: {
            }
            return readOnly == "off" ? .writable(since: since) : .readOnly
        } catch {
            return .unreachable(error)
        }
    }

    /// Every server's answer, asked at once (a frozen one costs ``checkTimeout``, not a
    /// timeout per server), in the settings' order.
    func checkAll() async -> [(DatabaseSettings.Endpoint, ServerCheck)] {
        await withTaskGroup(of: (Int, ServerCheck).self) { group in
            for (index, endpoint) in settings.endpoints.enumerated() {
                group.addTask { (index, await self.check(endpoint)) }
            }
            var checks: [ServerCheck?] = Array(repeating: nil, count: settings.endpoints.count)
            for await (index, check) in group { checks[index] = check }
            return zip(settings.endpoints, checks.map { $0 ?? .unreachable(CancellationError()) }).map { ($0, $1) }
        }
    }

    /// The server that takes writes; asks again, pausing a little longer each round (up to
    /// half a second), until exactly one does. `nil` when cancelled.
    ///
    /// Two servers that both take writes are a failover under way: a former primary that
    /// came back (it was frozen, or cut off) before its manager demoted it, beside the one
    /// promoted meanwhile. Whatever is written through the former is lost when it is
    /// demoted and rewound, and the order of the settings says nothing about which is which,
    /// so the search waits until only one takes writes. (Two addresses of one server are
    /// one server: they report the same start.)
    ///
    /// Says which servers were tried and why each was passed over: once when the search
    /// starts failing, then every 10 rounds, and once when it finds one.
    func findWritableServer() async -> DatabaseSettings.Endpoint? {
        var pause = Duration.milliseconds(50)
        var round = 0
        while !Task.isCancelled {
            round += 1
            let checks = await checkAll()
            let tried = Logger.Metadata(
                uniqueKeysWithValues: checks.map { ("\($0.0)", .string($0.1.describe(tls: settings.effectiveTLSMode))) })
            let writable = checks.compactMap { check -> (DatabaseSettings.Endpoint, String)? in
                if case .writable(let since) = check.1 { (check.0, since) } else { nil }
            }
            if let (endpoint, _) = writable.first, Set(writable.map(\.1)).count == 1 {
                logger.notice(
                    "writing through the PostgreSQL server that accepts writes",
                    metadata: ["database": "\(endpoint)"].merging(tried) { first, _ in first })
                return endpoint
            }
            if round == 1 || round % 10 == 0 {
                logger.warning(
                    writable.isEmpty
                        ? "no PostgreSQL server accepts writes; requests answer 503 UNAVAILABLE while the search goes on"
                        : "several PostgreSQL servers accept writes (a failover under way); requests answer 503 UNAVAILABLE until one does",
                    metadata: tried.merging(["round": "\(round)"]) { first, _ in first })
            }
            do { try await Task.sleep(for: pause) } catch { return nil }
            pause = min(pause * 2, .milliseconds(500))
        }
        return nil
    }
}
