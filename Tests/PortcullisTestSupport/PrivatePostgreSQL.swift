import Foundation
public import PortcullisStore

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL cluster of a test's own, for faults the shared cluster of `scripts/test` must
/// not see: a crash (`pg_ctl stop -m immediate`), a stop and a start. Made and driven with
/// the same shell functions `scripts/test` and `scripts/dev` use (`scripts/lib/postgres.sh`),
/// which run PostgreSQL's tools as the `postgres` user when the tests run as root.
public final class PrivatePostgreSQL: Sendable {
    /// The cluster's directory (its data and log).
    public let directory: String
    /// The port it listens on (loopback).
    public let port: Int

    private static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/lib/postgres.sh").path

    private init(directory: String, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// Makes a cluster in a new temporary directory, starts it, and runs `body` with it; the
    /// cluster is stopped and removed afterwards, pass or fail.
    public static func run<Result: Sendable>(_ body: (PrivatePostgreSQL) async throws -> Result) async throws -> Result {
        let cluster = try await make()
        return try await cluster.removed {
            try await cluster.start()
            _ = try await shell("pg_create_database \(cluster.port) portcullis")
            return try await body(cluster)
        }
    }

    /// A primary and a streaming standby of it (`pg_basebackup`), with synchronous
    /// replication: the primary acknowledges a COMMIT once the standby has it, so promoting
    /// the standby loses nothing acknowledged. Both are stopped and removed afterwards.
    public static func runReplicated<Result: Sendable>(
        _ body: (_ primary: PrivatePostgreSQL, _ standby: PrivatePostgreSQL) async throws -> Result
    ) async throws -> Result {
        try await run { primary in
            let standby = try await make()
            return try await standby.removed {
                _ = try await shell("pg_start_standby \(standby.directory) \(standby.port) \(primary.port)")
                _ = try await shell("pg_require_sync_standby \(primary.port)")
                return try await body(primary, standby)
            }
        }
    }

    /// A cluster's directory and port, nothing made yet.
    private static func make() async throws -> PrivatePostgreSQL {
        let directory = NSTemporaryDirectory() + "portcullis-pg-\(UUID().uuidString.prefix(8))"
        let port = try await shell("pg_free_port").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let number = Int(port) else { throw TestSetupError("no free port: \(port)") }
        return PrivatePostgreSQL(directory: directory, port: number)
    }

    /// Runs `body`, then stops the cluster and removes its directory, pass or fail, before
    /// returning: the next fault test must not share the machine with this one's cleanup.
    private func removed<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        _ = try? await Self.shell("pg_stop_cluster \(directory); rm -rf \(directory)")
        return try result.get()
    }

    /// Where it listens.
    public var endpoint: DatabaseSettings.Endpoint { DatabaseSettings.Endpoint(host: "127.0.0.1", port: port) }

    /// Settings reaching the cluster's `portcullis` database.
    public var settings: DatabaseSettings {
        DatabaseSettings(host: "127.0.0.1", port: port, user: "portcullis", database: "portcullis", maximumConnections: 8)
    }

    /// Starts the cluster (again).
    public func start() async throws {
        _ = try await Self.shell("pg_start_cluster \(directory) \(port)")
    }

    /// Makes this standby a primary (`pg_ctl promote`), as a failover does.
    public func promote() async throws {
        _ = try await Self.shell("pg_promote \(directory)")
    }

    /// Stops it cleanly (`pg_ctl stop -m fast`): sessions end, connections are refused.
    public func stop() async throws {
        _ = try await Self.shell("pg_stop_cluster \(directory)")
    }

    /// Kills it as a power cut would: `pg_ctl stop -m immediate` (no checkpoint, crash recovery at the next start).
    public func crash() async throws {
        _ = try await Self.shell(#"pg_as_owner "$(pg_find_bin)/pg_ctl" -D \#(directory)/data -m immediate -w stop"#)
    }

    /// Runs `script` in bash with `scripts/lib/postgres.sh` sourced; its output.
    ///
    /// Spawned and reaped by hand (`posix_spawn`, `waitpid` polled without blocking a thread):
    /// Foundation's `Process` misses the end of a shell that leaves a server running in the
    /// background here, and waits forever.
    private static func shell(_ script: String) async throws -> String {
        // A file, not a pipe: the server started in the background would hold a pipe open.
        let file = NSTemporaryDirectory() + "portcullis-pg-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: file) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let words: [String] = ["/bin/bash", "-c", "set -e; source \(library); \(script)"]
        let arguments = words.map { strdup($0) }
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, arguments + [nil], environ)
        guard spawned == 0 else { throw TestSetupError("cannot run bash: error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            try await Task.sleep(for: .milliseconds(50))
        }
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        // Exited normally (no signal) with status 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else { throw TestSetupError("\(script) failed: \(text)") }
        return text
    }
}
