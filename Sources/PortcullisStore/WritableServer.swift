import Logging
import NIOPosix
import PostgresNIO

extension Database {
    /// What one server said when asked whether it takes writes.
    enum ServerCheck: Sendable {
        /// It answered `transaction_read_only = off`: a primary.
        case writable
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
    /// `target_session_attrs=read-write` test: `SHOW transaction_read_only`).
    func check(_ endpoint: DatabaseSettings.Endpoint) async -> ServerCheck {
        do {
            let configuration = try settings.connectionConfiguration(for: endpoint, connectTimeout: Self.checkTimeout)
            let readOnly = try await CallDeadline.run(within: Self.checkTimeout) { [logger] in
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger
                ).get()
                let answer: Result<String, any Error>
                do {
                    var value = ""
                    for try await setting in try await connection.query("SHOW transaction_read_only", logger: logger)
                        .decode(String.self)
                    {
                        value = setting
                    }
                    answer = .success(value)
                } catch {
                    answer = .failure(error)
                }
                // Closing a connection we are done with cannot change the answer.
                try? await connection.close()
                return try answer.get()
            } expire: {
            }
            return readOnly == "off" ? .writable : .readOnly
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

    /// The first server, in the settings' order, that takes writes; asks again, pausing a
    /// little longer each round (up to half a second), until one does. `nil` when cancelled.
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
            if let writable = checks.first(where: { if case .writable = $0.1 { true } else { false } })?.0 {
                logger.notice(
                    "writing through the PostgreSQL server that accepts writes",
                    metadata: ["database": "\(writable)"].merging(tried) { first, _ in first })
                return writable
            }
            if round == 1 || round % 10 == 0 {
                logger.warning(
                    "no PostgreSQL server accepts writes; requests answer 503 UNAVAILABLE while the search goes on",
                    metadata: tried.merging(["round": "\(round)"]) { first, _ in first })
            }
            do { try await Task.sleep(for: pause) } catch { return nil }
            pause = min(pause * 2, .milliseconds(500))
        }
        return nil
    }
}
