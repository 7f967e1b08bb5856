import Configuration
import Foundation
import Logging
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto
import PortcullisHTTP
import PortcullisStore

/// A setting that is missing or invalid; startup stops with exit code 78 (EX_CONFIG).
struct SettingsError: Error, CustomStringConvertible {
    /// The configuration key, as written in the YAML file.
    let key: String
    let reason: String

    var description: String { "invalid configuration: \(key): \(reason)" }
}

/// Every setting of the daemon, read and validated once.
///
/// Sources, highest precedence first: command-line flags, `PORTCULLIS_*`
/// environment variables (the key's path in upper case joined by `_`), the
/// YAML file given by `--config`, then the defaults documented in
/// `config/portcullis.example.yaml`.
struct Settings: Sendable, Equatable {
    var listenHost = "127.0.0.1"
    var listenPort = 8080
    var publicURL: String
    var projectId: String
    var database: DatabaseSettings
    var apiKeys: [String] = []
    var logLevel = Logger.Level.info
    var logFormat = LogFormat.text
    var cacheRefreshSeconds = 60
    var tenantCacheBytes = TenantCacheBudget.defaultBytes
    /// Loaded only by commands that sign tokens (`serve`, `dev`).
    var masterKey: MasterKeySetting?
    var limits = AbuseLimits()
    var keyRotationDays = 30
    var trustedProxies: [IPNetwork] = []
    /// Networks outbound requests (IdP keys and user-info, webhooks) may reach although
    /// private, loopback or link-local; plain http is accepted for them too.
    var outboundAllowedNetworks: [IPNetwork] = []
    var idleTimeoutSeconds = 75
    var requestTimeoutSeconds = 30
    var drainSeconds = 0
    /// `email.*`: the default delivery channel, sendmail, retries.
    var emailDelivery = EmailDeliveryService.Configuration()

    /// The settings a running daemon can change on SIGHUP.
    var reloadable: [String: String] {
        [
            "log.level": logLevel.rawValue, "log.format": logFormat.rawValue,
            "limits.failed_sign_ins_per_account": String(limits.failedSignInsPerAccount),
            "limits.failed_sign_ins_per_ip": String(limits.failedSignInsPerIP),
            "limits.sign_ups_per_ip": String(limits.signUpsPerIP),
            "limits.email_actions_per_ip": String(limits.emailActionsPerIP),
            "limits.window_seconds": String(limits.windowSeconds),
        ]
    }

    var serverConfiguration: ServerConfiguration {
        get throws {
            guard let masterKey else { throw SettingsError(key: "master_key.file", reason: "is required") }
            return configuration(masterKey: masterKey.key)
        }
    }

    /// The service graph of a one-shot command. The commands seal nothing, so they run
    /// without `master_key.file` too, on a key nothing outlives.
    var commandServices: AuthServices.Configuration {
        configuration(masterKey: masterKey?.key ?? .generate()).services
    }

    private func configuration(masterKey: MasterKey) -> ServerConfiguration {
        var configuration = ServerConfiguration(
            projectId: projectId, publicURL: publicURL, host: listenHost, port: listenPort, database: database,
            apiKeys: apiKeys, cacheRefreshInterval: .seconds(cacheRefreshSeconds), masterKey: masterKey,
            abuseGuard: AbuseGuard(limits: limits), keyRotationPeriod: .seconds(keyRotationDays * 86_400),
            trustedProxies: trustedProxies, idleTimeout: .seconds(idleTimeoutSeconds),
            requestTimeout: .seconds(requestTimeoutSeconds), clock: SystemClock(), outboundAllowedNetworks: outboundAllowedNetworks,
            emailDelivery: emailDelivery, drainDelay: .seconds(drainSeconds))
        configuration.tenantCache = TenantCacheBudget(bytes: tenantCacheBytes)
        return configuration
    }
}

/// The master key and where it came from (compared by source: the key itself is never compared or printed).
struct MasterKeySetting: Sendable, Equatable {
    let source: String
    let key: MasterKey

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.source == rhs.source }
}

/// Log output formats.
enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json
}

/// Builds ``Settings`` from the provider hierarchy.
struct SettingsLoader {
    /// Values from command-line flags, keyed by configuration key.
    var overrides: [String: String] = [:]
    /// The YAML file, if any.
    var file: String?
    /// The environment (injectable for tests).
    var environment = ProcessInfo.processInfo.environment
    /// Whether the master key must be loaded (commands that sign tokens).
    var requiresMasterKey = false
    /// Networks added to `outbound.allowed_private_networks` whatever the sources say
    /// (`portcullis dev` adds loopback, for identity providers running on the developer's machine).
    var extraOutboundNetworks: [IPNetwork] = []
    /// The `email.default_channel` when the sources name none (`portcullis dev`: `log`).
    var defaultEmailChannel = "none"

    func load() async throws -> Settings {
        let reader = try await makeReader()
        return try read(reader)
    }

    private func makeReader() async throws -> ConfigReader {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(
                name: "flags",
                values: Dictionary(
                    uniqueKeysWithValues: overrides.map {
                        (AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)), ConfigValue(.string($0.value), isSecret: false))
                    })),
            EnvironmentVariablesProvider(
                environmentVariables: environment,
                secretsSpecifier: .dynamic { key, _ in key.contains("PASSWORD") || key.contains("KEY") }
            ).prefixKeys(with: "portcullis"),
        ]
        if let file {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw SettingsError(key: "config", reason: "cannot read \(file)")
            }
            do {
                let reader = ConfigReader(
                    provider: InMemoryProvider(values: ["filePath": ConfigValue(.string(file), isSecret: false)]))
                providers.append(try await FileProvider<YAMLSnapshot>(config: reader))
            } catch {
                throw SettingsError(key: "config", reason: "\(file) is not valid YAML")
            }
        }
        return ConfigReader(providers: providers)
    }

    /// The key-encryption key: `master_key.file`, else the variable named by
    /// `master_key.env`, else systemd's `$CREDENTIALS_DIRECTORY/master-key`.
    private func masterKey(file: String?, variable: String?) throws -> MasterKeySetting {
        let material: [UInt8]
        let source: String
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw SettingsError(key: "master_key.file", reason: "cannot read \(file)")
            }
            (material, source) = (Array(data), "file \(file)")
        } else if let variable {
            guard let value = environment[variable], !value.isEmpty else {
                throw SettingsError(key: "master_key.env", reason: "environment variable \(variable) is not set")
            }
            (material, source) = (Array(value.utf8), "env \(variable)")
        } else if let directory = environment["CREDENTIALS_DIRECTORY"],
            let data = FileManager.default.contents(atPath: directory + "/master-key")
        {
            (material, source) = (Array(data), "credential master-key")
        } else {
            throw SettingsError(
                key: "master_key.file",
                reason: "no master key: set master_key.file or master_key.env, or load the systemd credential master-key")
        }
        do {
            return MasterKeySetting(source: source, key: try MasterKey(material: material))
        } catch {
            throw SettingsError(
                key: variable != nil && file == nil ? "master_key.env" : "master_key.file",
                reason: "must be 32 bytes: raw, 64 hex digits or base64")
        }
    }

    private func read(_ config: ConfigReader) throws -> Settings {
        func string(_ key: String) -> String? {
            guard let value = config.string(forKey: ConfigKey(key.split(separator: ".").map(String.init))) else {
                return nil
            }
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty ? nil : trimmed
        }
        func int(_ key: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
            guard let text = string(key) else { return fallback }
            guard let value = Int(text), range.contains(value) else {
                throw SettingsError(
                    key: key, reason: "must be an integer from \(range.lowerBound) to \(range.upperBound), got \(text)")
            }
            return value
        }

        /// A YAML list, or a comma-separated string (environment variables, flags).
        func list(_ key: String) -> [String] {
            (config.stringArray(forKey: ConfigKey(key.split(separator: ".").map(String.init))) ?? string(key).map { [$0] } ?? [])
                .flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }

        let host = string("listen.host") ?? "127.0.0.1"
        let port = try int("listen.port", default: 8080, range: 0...65535)
        guard let projectId = string("project_id") else {
            throw SettingsError(key: "project_id", reason: "is required")
        }
        guard projectId.utf8.count <= 128, projectId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else {
            throw SettingsError(key: "project_id", reason: "must be letters, digits and hyphens")
        }
        let publicURL = string("public_url") ?? "http://\(host):\(port)"
        guard let url = URL(string: publicURL), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw SettingsError(key: "public_url", reason: "must be an http(s) URL")
        }
        let maxConnections = try int("database.max_connections", default: 20, range: 1...1000)
        var database: DatabaseSettings
        if let databaseURL = string("database.url") {
            guard let parsed = DatabaseSettings(url: databaseURL, maximumConnections: maxConnections) else {
                throw SettingsError(
                    key: "database.url",
                    reason: "must be postgres://user[:password]@host[:port][,host[:port]…]/name[?sslmode=disable|prefer|require]")
            }
            database = parsed
        } else {
            let port = try int("database.port", default: 5432, range: 1...65535)
            var endpoints: [DatabaseSettings.Endpoint] = []
            for entry in list("database.hosts") {
                guard let endpoint = DatabaseSettings.Endpoint(entry, defaultPort: port) else {
                    throw SettingsError(key: "database.hosts", reason: "\(entry) is not host[:port]")
                }
                endpoints.append(endpoint)
            }
            if endpoints.isEmpty, let host = string("database.host") {
                endpoints = [DatabaseSettings.Endpoint(host: host, port: port)]
            }
            guard !endpoints.isEmpty else {
                throw SettingsError(key: "database.url", reason: "is required (or database.host or hosts, user and name)")
            }
            guard let user = string("database.user") else {
                throw SettingsError(key: "database.user", reason: "is required with database.host or hosts")
            }
            var password: String?
            if let passwordFile = string("database.password_file") {
                guard let contents = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                    throw SettingsError(key: "database.password_file", reason: "cannot read \(passwordFile)")
                }
                password = contents.trimmingCharacters(in: .newlines)
            }
            database = DatabaseSettings(
                endpoints: endpoints, user: user, password: password, database: string("database.name") ?? user,
                maximumConnections: maxConnections)
        }
        database.requestTimeout = .seconds(try int("database.request_timeout", default: 5, range: 1...300))
        if let tls = string("database.tls") {
            guard let mode = DatabaseSettings.TLSMode(setting: tls) else {
                throw SettingsError(key: "database.tls", reason: "must be disable, prefer or require")
            }
            database.tlsMode = mode
        }
        var trustedProxies: [IPNetwork] = []
        for entry in list("trusted_proxies") {
            guard let network = IPNetwork(entry) else {
                throw SettingsError(key: "trusted_proxies", reason: "\(entry) is not an address or CIDR network")
            }
            trustedProxies.append(network)
        }
        var outboundAllowedNetworks: [IPNetwork] = []
        for entry in list("outbound.allowed_private_networks") {
            guard let network = IPNetwork(entry) else {
                throw SettingsError(
                    key: "outbound.allowed_private_networks", reason: "\(entry) is not an address or CIDR network")
            }
            outboundAllowedNetworks.append(network)
        }
        for network in extraOutboundNetworks where !outboundAllowedNetworks.contains(network) {
            outboundAllowedNetworks.append(network)
        }
        let apiKeys = list("api_keys")
        let levelText = string("log.level") ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw SettingsError(
                key: "log.level", reason: "must be one of trace, debug, info, notice, warning, error, critical")
        }
        let formatText = string("log.format") ?? "text"
        guard let format = LogFormat(rawValue: formatText.lowercased()) else {
            throw SettingsError(key: "log.format", reason: "must be text or json")
        }
        let limits = AbuseLimits(
            failedSignInsPerAccount: try int("limits.failed_sign_ins_per_account", default: 10, range: 0...1_000_000),
            failedSignInsPerIP: try int("limits.failed_sign_ins_per_ip", default: 100, range: 0...1_000_000),
            signUpsPerIP: try int("limits.sign_ups_per_ip", default: 100, range: 0...1_000_000),
            emailActionsPerIP: try int("limits.email_actions_per_ip", default: 100, range: 0...1_000_000),
            windowSeconds: try int("limits.window_seconds", default: 900, range: 1...86_400))
        var email = EmailDeliveryService.Configuration()
        let channel = (string("email.default_channel") ?? defaultEmailChannel).lowercased()
        switch channel {
        case "none": email.defaultDelivery = nil
        case "log": email.defaultDelivery = EmailDelivery(channel: .log)
        case "sendmail": email.defaultDelivery = EmailDelivery(channel: .sendmail)
        default: throw SettingsError(key: "email.default_channel", reason: "must be none, log or sendmail")
        }
        email.sendmailPath = string("email.sendmail_path") ?? email.sendmailPath
        email.defaultFrom = string("email.from") ?? "noreply@\(url.host ?? "localhost")"
        guard !email.defaultFrom.contains(where: \.isNewline) else {
            throw SettingsError(key: "email.from", reason: "must be one line")
        }
        email.allowedFromDomains = list("email.allowed_from_domains").map { $0.lowercased() }
        email.maxAttempts = try int("email.max_attempts", default: 8, range: 1...100)
        email.retryBaseDelay = .milliseconds(try int("email.retry_base_milliseconds", default: 10_000, range: 1...3_600_000))
        return Settings(
            listenHost: host, listenPort: port, publicURL: publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL,
            projectId: projectId, database: database, apiKeys: apiKeys, logLevel: level, logFormat: format,
            cacheRefreshSeconds: try int("cache.refresh_seconds", default: 60, range: 1...86_400),
            tenantCacheBytes: try int(
                "cache.tenant_bytes", default: TenantCacheBudget.defaultBytes, range: (1 << 20)...(1 << 40)),
            masterKey: requiresMasterKey
                ? try masterKey(file: string("master_key.file"), variable: string("master_key.env")) : nil,
            limits: limits, keyRotationDays: try int("keys.rotation_days", default: 30, range: 1...3650),
            trustedProxies: trustedProxies, outboundAllowedNetworks: outboundAllowedNetworks,
            idleTimeoutSeconds: try int("listen.idle_timeout_seconds", default: 75, range: 1...3600),
            requestTimeoutSeconds: try int("listen.request_timeout_seconds", default: 30, range: 1...3600),
            drainSeconds: try int("listen.drain_seconds", default: 0, range: 0...300), emailDelivery: email)
    }
}
