public import Hummingbird
import NIOCore
public import PortcullisCore

/// Reading JSON request bodies and writing JSON responses.
public enum JSONResponse {
    /// A JSON response with compact, key-sorted output.
    public static func make(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: value.serializedBytes())))
    }
}

extension Request {
    /// The body as JSON; an empty body reads as `{}`.
    ///
    /// Over the context's upload limit → `PAYLOAD_TOO_LARGE` (413); invalid
    /// UTF-8 or malformed JSON → `INVALID_ARGUMENT`.
    public func jsonBody(context: some RequestContext) async throws -> JSONValue {
        let bytes = try await bodyBytes(context: context)
        guard !bytes.isEmpty else { return .object([:]) }
        return try JSONValue.parse(bytes)
    }

    /// The whole body, up to the context's upload limit (`PAYLOAD_TOO_LARGE` beyond it, chunked or not).
    public func bodyBytes(context: some RequestContext) async throws -> [UInt8] {
        do {
            return Array(try await body.collect(upTo: context.maxUploadSize).readableBytesView)
        } catch is NIOTooManyBytesError {
            throw AuthError(.payloadTooLarge, detail: "Request body exceeds \(context.maxUploadSize) bytes")
        }
    }

    /// The first value of a query parameter.
    public func query(_ name: String) -> String? {
        uri.queryParameters[Substring(name)].map(String.init)
    }

    /// A boolean query parameter as Google's APIs read one: `true`/`false` in any case, or
    /// `1`/`0`; `nil` when absent; `INVALID_ARGUMENT` for anything else.
    public func booleanQuery(_ name: String) throws(AuthError) -> Bool? {
        guard let value = query(name) else { return nil }
        switch value.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw AuthError(.invalidArgument, detail: "\(name) must be true or false")
        }
    }
}
