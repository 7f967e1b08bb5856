public import Hummingbird
import NIOCore
public import PortcullisCore
import PortcullisJSON

/// A request type of the admin API's resources (users, admin keys, service accounts): a
/// member the type does not declare is `INVALID_ARGUMENT` naming it, as Google's front end
/// answers, where end-user bodies ignore it (DESIGN §2). Resources read as a whole document
/// (tenants, project config, providers) are checked against their Core `ResourceSchema`.
protocol AdminResourceBody: Decodable {}

/// Reads request bodies into the routes' request types, with Identity Toolkit's leniency
/// (`JSONValueDecoder`): the context's `requestDecoder`.
///
/// An empty body reads as `{}`; over the context's upload limit → `PAYLOAD_TOO_LARGE`
/// (413); invalid UTF-8, malformed JSON, a wrong type or an unknown name in an
/// `AdminResourceBody` → `INVALID_ARGUMENT`.
public struct LenientRequestDecoder: RequestDecoder {
    /// A decoder.
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let bytes = try await request.bodyBytes(context: context)
        let decoder = JSONValueDecoder(rejectingUnknownFields: type is any AdminResourceBody.Type)
        let value = try decoder.decode(type, from: bytes.isEmpty ? .object([:]) : JSONValue.parse(bytes))
        if let scoped = value as? any TenantScopedBody, let context = context as? PortcullisRequestContext {
            context.tenant.set(TenantScope(scoped.tenantId))
        }
        return value
    }
}

/// Writes the routes' response types as compact JSON: the context's `responseEncoder`.
public struct CompactJSONResponseEncoder: ResponseEncoder {
    /// An encoder.
    public init() {}

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        try Self.response(value)
    }

    /// `value` as a JSON response, for answers made without a request (the error envelope).
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONValueEncoder().encode(value).serializedBytes())))
    }
}

extension Request {
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

    /// An integer query parameter (`pageSize`); `nil` when absent; `INVALID_ARGUMENT` for
    /// anything but a number.
    public func integerQuery(_ name: String) throws(AuthError) -> Int? {
        guard let value = query(name) else { return nil }
        guard let number = Int(value) else { throw AuthError(.invalidArgument, detail: "\(name) must be a number") }
        return number
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
