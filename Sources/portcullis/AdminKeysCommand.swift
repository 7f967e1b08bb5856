import ArgumentParser
import Foundation
import PortcullisAuth
import PortcullisCore
import PortcullisStore

/// `portcullis admin-keys create|list|revoke`: admin keys, straight against the database.
struct AdminKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-keys", abstract: "Manage admin API keys.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key; its secret is printed alone on the last line, once.")

        @OptionGroup var options: ConfigOptions
        @Option(help: "A label for the key.") var name: String
        @Option(help: "Limit the key to one tenant.") var tenant: String?

        func run() async throws {
            let settings = try await options.loadSettings()
            let logger = commandLogger(settings)
            let scope: AdminScope = tenant.map(AdminScope.tenant) ?? .project
            let (key, secret) = try await withServices(settings, logger: logger) { services in
                try await services.adminKeys.create(displayName: name, scope: scope, actor: "cli")
            }
            print(
                "created admin key \(key.keyId) (\(key.scope.tenantId.map { "tenant \($0)" } ?? "project")) — the secret is shown only now:"
            )
            print(secret)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List live keys (never their secrets).")

        @OptionGroup var options: ConfigOptions
        @Option(help: "Only the keys of this tenant.") var tenant: String?

        func run() async throws {
            let settings = try await options.loadSettings()
            let logger = commandLogger(settings)
            let keys = try await withServices(settings, logger: logger) { services in
                try await services.adminKeys.list(ofTenant: tenant)
            }
            for key in keys {
                print(
                    [key.keyId, key.scope.tenantId ?? "project", key.displayName, key.createTime.ISO8601Format()]
                        .joined(separator: "\t"))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key; its next request is refused.")

        @OptionGroup var options: ConfigOptions
        @Argument(help: "The key id.") var keyId: String

        func run() async throws {
            let settings = try await options.loadSettings()
            let logger = commandLogger(settings)
            try await withServices(settings, logger: logger) { services in
                try await services.adminKeys.revoke(keyId: keyId, actor: "cli")
            }
            print("revoked \(keyId)")
        }
    }
}
