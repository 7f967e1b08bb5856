import Logging
import PortcullisAuth
import PortcullisHTTP
import ServiceLifecycle
import UnixSignals

/// Re-reads the configuration on SIGHUP and applies what can change while running.
///
/// Reloadable: `log.level`, `log.format` and the abuse limits. Other changed
/// keys are logged as needing a restart. An invalid file is logged and the
/// running settings kept.
struct ReloadService: Service {
    let loader: SettingsLoader
    let initial: Settings
    let output: LogOutput
    let abuseGuard: AbuseGuard
    let logger: Logger

    func run() async throws {
        var current = initial
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                let next = try await loader.load()
                let changed = next.reloadable.filter { current.reloadable[$0.key] != $0.value }
                output.update(level: next.logLevel, format: next.logFormat)
                abuseGuard.update(next.limits)
                var needsRestart = next
                needsRestart.logLevel = current.logLevel
                needsRestart.logFormat = current.logFormat
                needsRestart.limits = current.limits
                if needsRestart != current {
                    logger.warning("configuration changes other than log settings and limits need a restart")
                }
                current.logLevel = next.logLevel
                current.logFormat = next.logFormat
                current.limits = next.limits
                logger.notice(
                    "configuration reloaded",
                    metadata: changed.isEmpty
                        ? ["changed": "none"]
                        : Logger.Metadata(uniqueKeysWithValues: changed.map { ($0.key, .string($0.value)) }))
            } catch {
                logger.error("configuration reload failed, keeping the running settings: \(error)")
            }
        }
    }
}
