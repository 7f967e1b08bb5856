import ArgumentParser
import Foundation
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisStore

/// `portcullis tenants list|create|show|set`: tenants, straight against the database.
///
/// Settings are given as `path=value` pairs using the API's field paths, e.g.
/// `client.permissions.disabledUserSignup=true`; values are read as JSON when
/// they parse as JSON, else as strings.
struct TenantsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenants", abstract: "Manage tenants.", subcommands: [List.self, Create.self, Show.self, Set.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let settings = try await options.loadSettings()
            let logger = commandLogger(settings)
            let tenants = try await withDatabase(settings, logger: logger) { database in
                try await TenantRepository(database: database, logger: logger).list(after: nil, limit: 10_000)
            }
            for tenant in tenants { print("\(tenant.id)\t\(tenant.settings.displayName ?? "")") }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant and print its id.")
        @OptionGroup var options: ConfigOptions
        @Option(help: "The tenant's display name.") var displayName: String
        @Argument(help: "Settings as path=value pairs.") var settings: [String] = []

        func run() async throws {
            let config = try await options.loadSettings()
            let logger = commandLogger(config)
            var body = try TenantsCommand.patch(from: settings).body
            body.setValue(.string(displayName), at: ["displayName"])
            let tenantBody = body
            let tenant = try await withDatabase(config, logger: logger) { database in
                try await TenantsCommand.service(database, config, logger).create(body: tenantBody, actor: "cli")
            }
            print(tenant.id)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a tenant as JSON.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The tenant id.") var tenantId: String

        func run() async throws {
            let config = try await options.loadSettings()
            let logger = commandLogger(config)
            let tenant = try await withDatabase(config, logger: logger) { database in
                try await TenantsCommand.service(database, config, logger).get(id: tenantId)
            }
            print(tenant.settings.json.serialized())
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change settings, e.g. client.permissions.disabledUserSignup=true.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: "The tenant id.") var tenantId: String
        @Argument(help: "Settings as path=value pairs.") var settings: [String]

        func run() async throws {
            let config = try await options.loadSettings()
            let logger = commandLogger(config)
            let (body, mask) = try TenantsCommand.patch(from: settings)
            let tenant = try await withDatabase(config, logger: logger) { database in
                try await TenantsCommand.service(database, config, logger).update(
                    id: tenantId, body: body, updateMask: mask, scope: .project, actor: "cli")
            }
            print(tenant.settings.json.serialized())
        }
    }

    static func service(_ database: Database, _ settings: Settings, _ logger: Logger) -> TenantAdminService {
        let tenants = TenantRepository(database: database, logger: logger)
        let project = ProjectConfigRepository(database: database, projectId: settings.projectId, logger: logger)
        return TenantAdminService(
            tenants: tenants, projectConfig: project, allowedFromDomains: settings.emailDelivery.allowedFromDomains)
    }

    /// A settings cache for one command's run (nothing invalidates it: commands are short).
    static func cache(_ database: Database, _ settings: Settings, _ logger: Logger) -> TenantSettingsCache {
        TenantSettingsCache(
            tenants: TenantRepository(database: database, logger: logger),
            projectConfig: ProjectConfigRepository(database: database, projectId: settings.projectId, logger: logger))
    }

    /// Turns `path=value` pairs into a PATCH body and its update mask.
    static func patch(from pairs: [String]) throws -> (body: JSONValue, mask: String) {
        var body = JSONValue.object([:])
        var paths: [String] = []
        for pair in pairs {
            guard let separator = pair.firstIndex(of: "="), separator != pair.startIndex else {
                throw ValidationError("expected path=value, got \(pair)")
            }
            let path = String(pair[..<separator])
            let text = String(pair[pair.index(after: separator)...])
            let value = (try? JSONValue.parse(Array(text.utf8))) ?? .string(text)
            body.setValue(value, at: path.split(separator: ".").map(String.init))
            paths.append(path)
        }
        return (body, paths.joined(separator: ","))
    }
}
