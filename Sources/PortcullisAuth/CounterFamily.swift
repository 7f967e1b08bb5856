import Foundation
import Synchronization

/// A Prometheus counter with one series per label set, kept apart from swift-prometheus'
/// registry and rendered after it on `/metrics`.
///
/// For the families that grow with the tenants (requests and sign-ins by tenant): the registry
/// copies a family's every series to add one (swift-prometheus 2.4), so each tenant's first
/// request cost time in proportion to the tenants seen before it — 17 ms of CPU, under the
/// registry's lock, at 90,000 tenants in `scripts/bench`'s tenants section. Here a new series
/// is one dictionary insertion.
public final class CounterFamily: Sendable {
    /// The metric's name.
    public let name: String
    private let help: String
    private let labelNames: [String]
    private let counts = Mutex<[[String]: Int]>([:])

    /// A family called `name`, its series told apart by `labelNames`.
    public init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    /// Adds one to the series of `labelValues`, in the order of the family's label names.
    public func increment(_ labelValues: [String]) {
        counts.withLock { $0[labelValues, default: 0] += 1 }
    }

    /// Appends the family in Prometheus' text format (nothing while it has no series).
    public func emit(into buffer: inout [UInt8]) {
        let series = counts.withLock { $0 }
        guard !series.isEmpty else { return }
        var text = "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for (values, count) in series {
            let labels = zip(labelNames, values).map { "\($0)=\"\(Self.escaped($1))\"" }.joined(separator: ",")
            text += "\(name){\(labels)} \(count)\n"
        }
        buffer += Array(text.utf8)
    }

    /// A label value as the text format wants it: backslash, double quote and newline escaped.
    private static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
