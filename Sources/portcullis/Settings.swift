import Configuration
import Foundation
import Logging
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

    /// The settings a running daemon can change on SIGHUP.
    var reloadable: [String: String] {
        ["log.level": logLevel.rawValue, "log.format": logFormat.rawValue]
    }

    var serverConfiguration: ServerConfiguration {
        ServerConfiguration(
            projectId: projectId, publicURL: publicURL, host: listenHost, port: listenPort, database: database,
            apiKeys: apiKeys, cacheRefreshInterval: .seconds(cacheRefreshSeconds))
    }
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

    func load() async throws -> Settings {
        let reader = try await makeReader()
        return try read(reader)
    }

    private func makeReader() async throws -> ConfigReader {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(
                name: "flags",
                values: Dictionary(
                    uniqueKeysWithValues: overrides.map { (AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)), ConfigValue(.string($0.value), isSecret: false)) })),
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
        let database: DatabaseSettings
        if let databaseURL = string("database.url") {
            guard let parsed = DatabaseSettings(url: databaseURL, maximumConnections: maxConnections) else {
                throw SettingsError(key: "database.url", reason: "must be postgres://user[:password]@host[:port]/name")
            }
            database = parsed
        } else {
            guard let dbHost = string("database.host") else {
                throw SettingsError(key: "database.url", reason: "is required (or database.host, user and name)")
            }
            guard let user = string("database.user") else {
                throw SettingsError(key: "database.user", reason: "is required with database.host")
            }
            var password: String?
            if let passwordFile = string("database.password_file") {
                guard let contents = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                    throw SettingsError(key: "database.password_file", reason: "cannot read \(passwordFile)")
                }
                password = contents.trimmingCharacters(in: .newlines)
            }
            database = DatabaseSettings(
                host: dbHost, port: try int("database.port", default: 5432, range: 1...65535), user: user,
                password: password, database: string("database.name") ?? user, maximumConnections: maxConnections)
        }
        let apiKeys = (config.stringArray(forKey: "api_keys") ?? string("api_keys").map { [$0] } ?? [])
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        let levelText = string("log.level") ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw SettingsError(
                key: "log.level", reason: "must be one of trace, debug, info, notice, warning, error, critical")
        }
        let formatText = string("log.format") ?? "text"
        guard let format = LogFormat(rawValue: formatText.lowercased()) else {
            throw SettingsError(key: "log.format", reason: "must be text or json")
        }
        return Settings(
            listenHost: host, listenPort: port, publicURL: publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL,
            projectId: projectId, database: database, apiKeys: apiKeys, logLevel: level, logFormat: format,
            cacheRefreshSeconds: try int("cache.refresh_seconds", default: 60, range: 1...86_400))
    }
}
