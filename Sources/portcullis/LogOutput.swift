import Foundation
import Logging
import Synchronization

/// The log level and format every logger of the process reads, changeable on SIGHUP.
final class LogOutput: Sendable {
    private let state: Mutex<(level: Logger.Level, format: LogFormat)>

    init(level: Logger.Level, format: LogFormat) {
        state = Mutex((level, format))
    }

    var level: Logger.Level { state.withLock { $0.level } }
    var format: LogFormat { state.withLock { $0.format } }

    func update(level: Logger.Level, format: LogFormat) {
        state.withLock { $0 = (level, format) }
    }

    /// Installs Portcullis' handler as the process's logging backend (once per process).
    func bootstrap() {
        LoggingSystem.bootstrap { label in LogOutputHandler(label: label, output: self) }
    }
}

/// Writes one line per event to standard error, as text or JSON.
///
/// Its level is the shared ``LogOutput`` level (so SIGHUP reaches every
/// logger already handed out); setting `logLevel` on one logger is ignored.
struct LogOutputHandler: LogHandler {
    let label: String
    let output: LogOutput
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { output.level }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let timestamp = Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day())
        let line: String
        switch output.format {
        case .text:
            let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            line = "\(timestamp) \(event.level.rawValue.uppercased()) \(label): \(event.message)\(fields.isEmpty ? "" : " " + fields)\n"
        case .json:
            var object: [String: String] = [
                "time": timestamp, "level": event.level.rawValue, "logger": label, "message": "\(event.message)",
            ]
            for (key, value) in merged { object[key] = "\(value)" }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            line = String(decoding: data, as: UTF8.self) + "\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }
}
