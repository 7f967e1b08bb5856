import ArgumentParser
import Foundation
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto
import PortcullisStore

/// `portcullis dev`: a ready-to-try daemon on a private database.
///
/// `scripts/dev` starts the private PostgreSQL under `./.portcullis/` and
/// calls this with its URL. This migrates, makes sure a demo tenant exists
/// (its id, the dev API key and the dev admin key persist in the state directory; a
/// revoked admin key is replaced), prints copy-paste curl commands, and serves.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev", abstract: "Run a development daemon with a demo tenant and printed keys.")

    @OptionGroup var options: ConfigOptions

    @Option(help: "Where dev state (API key, demo tenant id) is kept.")
    var stateDirectory = ".portcullis"

    func run() async throws {
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        let apiKey = try persisted("api-key") { "dev-" + SecretToken.random(byteCount: 18) }
        _ = try persisted("master.key") { MasterKey.generate().hexString }
        var loader = options.loader
        loader.requiresMasterKey = true
        loader.overrides["project_id"] = loader.overrides["project_id"] ?? "demo-project"
        loader.overrides["api_keys"] = apiKey
        loader.overrides["master_key.file"] = loader.overrides["master_key.file"] ?? path("master.key")
        // Identity providers under development run on this machine: let outbound requests reach loopback.
        loader.extraOutboundNetworks = ["127.0.0.0/8", "::1/128"].compactMap { IPNetwork($0) }
        // Email action links land in the log unless a tenant configures delivery.
        loader.defaultEmailChannel = "log"
        let settings = try await options.loadSettings(loader)
        let logger = commandLogger(settings)

        let (tenantId, adminSecret) = try await withServices(settings, logger: logger) { services in
            try await services.migrator.migrate()
            let service = services.tenantAdmin
            let known = try? String(contentsOfFile: path("demo-tenant"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            // Only "no such tenant" means a new demo tenant; any other failure stops the command.
            var existing: Tenant?
            if let known {
                do {
                    existing = try await service.get(id: known)
                } catch let error as AuthError where error.code == .tenantNotFound {
                    existing = nil
                }
            }
            let tenant: Tenant
            if let existing {
                tenant = existing
            } else {
                var demo = TenantSettings()
                demo.displayName = "demo"
                demo.allowPasswordSignup = true
                demo.enableAnonymousUser = true
                tenant = try await service.create(settings: demo, actor: "cli")
                try tenant.id.write(toFile: path("demo-tenant"), atomically: true, encoding: .utf8)
            }
            return (
                tenant.id,
                try await devAdminKey(services.adminKeys)
            )
        }
        let configFile = try writeConfiguration(settings: settings, apiKey: apiKey)
        // Written straight to the descriptor: stdout may be a pipe, and the server runs until killed.
        FileHandle.standardOutput.write(
            Data(
                instructions(
                    settings: settings, apiKey: apiKey, adminKey: adminSecret, tenantId: tenantId, configFile: configFile
                ).utf8))
        try await runServer(settings: settings, loader: loader, development: true)
    }

    private func path(_ name: String) -> String { "\(stateDirectory)/\(name)" }

    /// The dev project key: the one kept in the state directory while it is live, else a new
    /// one kept there, so restarts leave one live dev key and the pasted `ADMIN` keeps working.
    private func devAdminKey(_ service: AdminKeyService) async throws -> String {
        if let kept = try? String(contentsOfFile: path("admin-key"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines),
            try await service.activeKey(secret: kept)?.scope == .project
        {
            return kept
        }
        let (_, secret) = try await service.create(displayName: "dev", scope: .project, actor: "cli")
        try keep(secret, as: "admin-key")
        return secret
    }

    /// The configuration this daemon runs with, as a file the other commands take with
    /// `--config` (`portcullis tenants list --config .portcullis/portcullis.yaml`).
    private func writeConfiguration(settings: Settings, apiKey: String) throws -> String {
        let directory = URL(fileURLWithPath: stateDirectory).standardizedFileURL.path
        let database = settings.database
        let yaml = """
            # Written by `portcullis dev` (scripts/dev) on every start: the settings of the dev daemon,
            # for the other commands, e.g. portcullis tenants list --config \(directory)/portcullis.yaml
            project_id: \(settings.projectId)
            public_url: \(settings.publicURL)
            listen:
              host: \(settings.listenHost)
              port: \(settings.listenPort)
            database:
              url: postgres://\(database.user)@\(database.host):\(database.port)/\(database.database)
            api_keys: [\(apiKey)]
            master_key:
              file: \(directory)/master.key

            """
        let file = "\(directory)/portcullis.yaml"
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        return file
    }

    private func persisted(_ name: String, make: () -> String) throws -> String {
        if let value = try? String(contentsOfFile: path(name), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty
        {
            return value
        }
        let value = make()
        try keep(value, as: name)
        return value
    }

    /// Writes a secret to the state directory, readable by its owner only.
    private func keep(_ value: String, as name: String) throws {
        try value.write(toFile: path(name), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path(name))
    }

    private func instructions(
        settings: Settings, apiKey: String, adminKey: String, tenantId: String, configFile: String
    ) -> String {
        let base = "http://\(settings.listenHost):\(settings.listenPort)"
        let project = "\(base)/v2/projects/\(settings.projectId)"
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        // scripts/dev builds the example client beside the daemon.
        let client = URL(fileURLWithPath: binary).deletingLastPathComponent().appendingPathComponent("portcullis-client").path
        return """

            Portcullis dev is starting on \(base)  (project \(settings.projectId))

              API key (end users, ?key=):   \(apiKey)
              admin key (project scope):    \(adminKey)
              demo tenant:                  \(tenantId)
              configuration:                \(configFile)

            Paste into another terminal (the README's examples use these names):

              KEY='\(apiKey)'
              ADMIN='\(adminKey)'
              T='\(tenantId)'
              B='\(base)'
              P='\(project)'
              portcullis() { '\(binary)' "$@"; }
              pc() { '\(client)' "$@"; }
              CONFIG='\(configFile)'

            The command line then works against this daemon's database, e.g.:

              portcullis tenants list --config "$CONFIG"
              portcullis admin-keys create --config "$CONFIG" --name ops --tenant "$T"

            Try it (with the lines above pasted):

              # as an end user of the demo tenant: sign up, sign in, verify the ID token as a reverse proxy would
              EMAIL="you-$(date +%s)@example.com"   # new on every try
              curl -s "$B/v1/accounts:signUp?key=$KEY" \\
                -d "{\\"email\\":\\"$EMAIL\\",\\"password\\":\\"correct horse\\",\\"tenantId\\":\\"$T\\"}"
              ID=$(curl -s "$B/v1/accounts:signInWithPassword?key=$KEY" \\
                -d "{\\"email\\":\\"$EMAIL\\",\\"password\\":\\"correct horse\\",\\"tenantId\\":\\"$T\\"}" \\
                | sed -n 's/.*"idToken":"\\([^"]*\\)".*/\\1/p')
              curl -si "$B/v1/verify" -H "Authorization: Bearer $ID"

              # the operator switches off self-service sign-up and deletion: the next sign-up is refused
              curl -s -X PATCH -H "Authorization: Bearer $ADMIN" "$P/tenants/$T?updateMask=client.permissions" \\
                -d '{"client":{"permissions":{"disabledUserSignup":true,"disabledUserDeletion":true}}}'
              curl -s "$B/v1/accounts:signUp?key=$KEY" \\
                -d "{\\"email\\":\\"eve-$(date +%s)@example.com\\",\\"password\\":\\"correct horse\\",\\"tenantId\\":\\"$T\\"}"
              #   → {"error":{"code":400,"message":"ADMIN_ONLY_OPERATION",…}}
              curl -s -H "Authorization: Bearer $ADMIN" "$P/tenants/$T/auditEvents"
              # and back on
              curl -s -X PATCH -H "Authorization: Bearer $ADMIN" "$P/tenants/$T?updateMask=client.permissions" \\
                -d '{"client":{"permissions":{}}}'

              # the Firebase Admin SDKs manage users here as they would an emulator's (dev accepts their
              # credential, Bearer owner; serve never does), e.g. firebase-admin with projectId \(settings.projectId):
              export FIREBASE_AUTH_EMULATOR_HOST=\(settings.listenHost):\(settings.listenPort)

            """
    }
}
