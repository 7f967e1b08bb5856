import ArgumentParser
import Foundation
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisHTTP
import PortcullisJSON
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
            try await withServices(settings, logger: logger) { services in
                // Page by page, printed as they come: every tenant, in id order.
                var token: String?
                repeat {
                    let page = try await services.tenantAdmin.list(pageSize: 1000, pageToken: token)
                    for tenant in page.tenants { print("\(tenant.id)\t\(tenant.settings.displayName ?? "")") }
                    token = page.nextPageToken
                } while token != nil
            }
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
            let tenantSettings = try TenantResource.settings(from: body, kind: .tenant)
            let tenant = try await withServices(config, logger: logger) { services in
                try await services.tenantAdmin.create(settings: tenantSettings, actor: "cli")
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
            let tenant = try await withServices(config, logger: logger) { services in
                try await services.tenantAdmin.get(id: tenantId)
            }
            print(try TenantResource.fields(tenant.settings).serialized())
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
            let change = try TenantResource.change(body: body, updateMask: mask, kind: .tenant)
            let tenant = try await withServices(config, logger: logger) { services in
                try await services.tenantAdmin.update(id: tenantId, change: change, scope: .project, actor: "cli")
            }
            print(try TenantResource.fields(tenant.settings).serialized())
        }
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
