import Foundation

/// A complete 2xx answer to an outbound request: status, headers and the whole body
/// (at most the client's cap).
public struct OutboundResponse: Sendable {
    /// The HTTP status (2xx).
    public var status: Int
    /// The response headers in the order received (names as sent).
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]

    /// A response.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.first { $0.name.lowercased() == name }?.value
    }

    /// How long the answer may be cached, from `Cache-Control`: `max-age` in seconds
    /// (`s-maxage` is for shared caches, which this is not), 0 for `no-store` and
    /// `no-cache`, `nil` when the header says neither.
    public var maxAgeSeconds: Int? {
        let directives = headers.filter { $0.name.lowercased() == "cache-control" }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if directives.contains(where: { $0 == "no-store" || $0 == "no-cache" }) { return 0 }
        for directive in directives where directive.hasPrefix("max-age=") {
            let value = directive.dropFirst("max-age=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            // A huge max-age saturates rather than failing to parse.
            guard !value.isEmpty, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber) else { return nil }
            return Int(value) ?? Int.max
        }
        return nil
    }
}
