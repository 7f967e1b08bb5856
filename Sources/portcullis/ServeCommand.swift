import ArgumentParser
import Foundation
import Logging
import NIOCore
import PortcullisAuth
import PortcullisHTTP

/// `portcullis serve`: the daemon.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the gateway (migrates the database first).")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        var loader = options.loader
        loader.requiresMasterKey = true
        let settings = try await options.loadSettings(loader)
        try await runServer(settings: settings, loader: loader)
    }
}

/// Runs the daemon until SIGTERM/SIGINT: sd_notify on readiness and shutdown, SIGHUP reload.
/// `development` (`portcullis dev`) also accepts the Admin SDKs' emulator credential (`Bearer owner`).
func runServer(
    settings: Settings, loader: SettingsLoader, development: Bool = false, onReady: @escaping @Sendable () -> Void = {}
) async throws {
    GlibcHeap.limitArenas(to: 2)
    let output = LogOutput(level: settings.logLevel, format: settings.logFormat)
    output.bootstrap()
    let logger = Logger(label: "portcullis")
    var configuration = try settings.serverConfiguration
    // `portcullis dev` only: the Admin SDKs pointed at it as an emulator send `Bearer owner`.
    configuration.acceptsEmulatorAdminCredential = development
    let server = try PortcullisServer(
        configuration: configuration, logger: logger,
        services: { services in
            [
                ReloadService(
                    loader: loader, initial: settings, output: output, abuseGuard: configuration.abuseGuard, logger: logger),
                SystemdStoppingNotifier(),
                MemoryTrimService(interval: .seconds(30), hashing: services.passwords, hashingQuiet: .seconds(10)),
            ]
        },
        onServerRunning: { channel in
            logger.notice(
                "portcullis is listening",
                metadata: ["address": "\(channel.localAddress?.description ?? "?")", "project": "\(settings.projectId)"])
            SystemdNotifier.notify("READY=1")
            onReady()
        })
    do {
        try await server.run()
    } catch let error as IOError where error.errnoCode == EADDRINUSE {
        throw ListenFailure(host: settings.listenHost, port: settings.listenPort)
    }
    logger.notice("portcullis stopped")
}

/// The listen address is taken: said with the address, rather than as NIO's `bind(…)` error.
struct ListenFailure: Error, CustomStringConvertible {
    let host: String
    let port: Int

    var description: String {
        "cannot listen on \(host):\(port): the address is already in use (another portcullis, or scripts/dev, already running?)"
    }
}
