import ArgumentParser
import Foundation
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisStore

#if canImport(Glibc)
import Glibc
import PortcullisJSON
#endif

/// `portcullis users import|export`: moving users in and out with their password hashes, in
/// the format `firebase auth:export` writes.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Import and export users with their password hashes.",
        subcommands: [Import.self, Export.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import users from a `firebase auth:export` JSON file (or `portcullis users export`'s).")
        @OptionGroup var options: ConfigOptions
        @Option(help: "The tenant to import into; project users when absent.") var tenant: String?
        @Option(
            help: ArgumentHelp(
                "How the file's password hashes were made: a JSON file with Identity Toolkit's fields (hashAlgorithm, signerKey, saltSeparator, rounds, memoryCost, …) or the Firebase console's (algorithm, base64_signer_key, base64_salt_separator, rounds, mem_cost)."
            ))
        var hashConfig: String?
        @Argument(help: "The users file: {\"users\": [...]}.") var file: String

        func run() async throws {
            let settings = try await options.loadSettings()
            let logger = commandLogger(settings)
            let records = try Self.records(in: file)
            let config = try hashConfig.map { path in
                guard let data = FileManager.default.contents(atPath: path),
                    let config = try UserImportPolicy.hashConfig(of: try JSONValue.parse(Array(data)))
                else { throw ValidationError("\(path) names no hash algorithm") }
                return config
            }
            let tenantId = tenant
            let progress = Progress(total: records.count, terminal: isatty(STDERR_FILENO) == 1)
            let summary = try await withServices(settings, logger: logger) { services in
                let service = services.userImports
                var summary = Summary()
                var start = 0
                while start < records.count {
                    let batch = Array(records[start..<min(start + UserImportPolicy.maximumUsersPerRequest, records.count)])
                    let failures = try await service.importUsers(
                        tenant: TenantScope(tenantId), records: batch, hashConfig: config, actor: "cli")
                    summary.add(failures, batchSize: batch.count, offset: start)
                    start += batch.count
                    progress.show(start)
                }
                return summary
            }
            progress.finish()
            print(summary.report)
        }

        /// The records of `{"users": [...]}` (or of a bare list).
        static func records(in path: String) throws -> [JSONValue] {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ValidationError("cannot read \(path)")
            }
            let json = try JSONValue.parse(Array(data))
            if case .array(let users) = json { return users }
            guard case .array(let users)? = json.value(at: ["users"]) else {
                throw ValidationError("\(path) has no \"users\" list")
            }
            return users
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a tenant's users, with their password hashes, in `firebase auth:export`'s JSON format.")
        @OptionGroup var options: ConfigOptions
        @Option(help: "The tenant to export; project users when absent.") var tenant: String?
        @Argument(help: "The file to write (`-`: standard output).") var file: String

        func run() async throws {
            let settings = try await options.loadSettings()
            let logger = commandLogger(settings)
            let output: FileHandle
            if file == "-" {
                output = FileHandle.standardOutput
            } else {
                // 0600: the file holds password hashes.
                guard FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]),
                    let handle = FileHandle(forWritingAtPath: file)
                else { throw ValidationError("cannot write \(file)") }
                output = handle
            }
            let tenantId = tenant
            // Page by page on the primary key: memory stays one page whatever the tenant's size.
            let count = try await withServices(settings, logger: logger) { services in
                let users = UserRepository(database: services.database, logger: logger)
                _ = try await services.tenantSettings.settings(tenant: TenantScope(tenantId))
                try output.write(contentsOf: Data("{\"users\": [\n".utf8))
                var after: String?
                var count = 0
                while true {
                    let page = try await users.pageWithPasswordHashes(tenant: TenantScope(tenantId), after: after, limit: 1000)
                    var chunk: [UInt8] = []
                    for (user, hash) in page {
                        if count > 0 { chunk += Array(",\n".utf8) }
                        chunk += UserImportPolicy.exportRecord(user, passwordHash: hash).serializedBytes()
                        count += 1
                    }
                    try output.write(contentsOf: Data(chunk))
                    guard page.count == 1000, let last = page.last else { break }
                    after = last.user.uid
                }
                try output.write(contentsOf: Data("\n]}\n".utf8))
                return count
            }
            if file != "-" {
                try output.close()
                FileHandle.standardError.write(Data("exported \(count) users to \(file)\n".utf8))
            }
        }
    }

    /// What an import did, for the closing report.
    struct Summary {
        var imported = 0
        var skipped = 0
        var failures: [String: [Int]] = [:]

        /// Already present (same uid): skipped, so an interrupted import can simply be run again.
        mutating func add(_ batch: [UserImportService.Failure], batchSize: Int, offset: Int) {
            imported += batchSize - batch.count
            for failure in batch {
                if failure.message == AuthError.Code.duplicateLocalId.rawValue {
                    skipped += 1
                } else {
                    failures[failure.message, default: []].append(offset + failure.index)
                }
            }
        }

        var report: String {
            let failed = failures.values.reduce(0) { $0 + $1.count }
            var lines = ["imported \(imported), skipped \(skipped) (already present), failed \(failed)"]
            for (message, indexes) in failures.sorted(by: { $0.value.count > $1.value.count }) {
                let shown = indexes.prefix(10).map(String.init).joined(separator: ", ")
                lines.append("  \(message): \(indexes.count) (users \(shown)\(indexes.count > 10 ? ", …" : ""))")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// A progress bar on standard error, drawn only on a terminal.
    struct Progress {
        let total: Int
        let terminal: Bool

        func show(_ done: Int) {
            guard terminal, total > 0 else { return }
            let width = 30
            let filled = width * done / total
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total)".utf8))
        }

        func finish() {
            if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
        }
    }
}
