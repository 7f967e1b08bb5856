public import Hummingbird
import HTTPTypes
import Logging
import PortcullisCore
import PostgresNIO

/// The outermost responder: emulator prefixes, the error envelope, and request metrics.
///
/// Wrapping the router (rather than being a router middleware) means 404s,
/// 405s and errors thrown anywhere — middleware included — are rendered the
/// same way and counted.
public struct PortcullisResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == PortcullisRequestContext {
    public typealias Context = PortcullisRequestContext

    /// Path prefixes Firebase SDKs use when pointed at an emulator host.
    static var emulatorPrefixes: [String] { ["/identitytoolkit.googleapis.com", "/securetoken.googleapis.com"] }

    let inner: Inner
    let metrics: HTTPMetrics

    /// Wraps the router's responder.
    public init(inner: Inner, metrics: HTTPMetrics) {
        self.inner = inner
        self.metrics = metrics
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let request = Self.strippingEmulatorPrefix(request)
        let response: Response
        do {
            response = try await inner.respond(to: request, context: context)
        } catch {
            response = Self.errorResponse(for: error, logger: context.logger)
        }
        metrics.record(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue,
            status: response.status.code, duration: ContinuousClock.now - start)
        return response
    }

    static func strippingEmulatorPrefix(_ request: Request) -> Request {
        guard let path = request.head.path,
            let prefix = emulatorPrefixes.first(where: { path.hasPrefix($0 + "/") })
        else { return request }
        var head = request.head
        head.path = String(path.dropFirst(prefix.count))
        return Request(head: head, body: request.body)
    }

    /// Maps any error to the envelope; only genuine faults become 5xx.
    static func errorResponse(for error: any Error, logger: Logger) -> Response {
        let authError: AuthError
        switch error {
        case let error as AuthError:
            authError = error
        case let error as HTTPError:
            switch error.status {
            case .notFound: authError = AuthError(.notFound)
            case .methodNotAllowed: authError = AuthError(.methodNotAllowed)
            case .contentTooLarge: authError = AuthError(.payloadTooLarge)
            case .badRequest: authError = AuthError(.invalidArgument, detail: error.body)
            default:
                logger.warning("HTTP error", metadata: ["status": "\(error.status.code)"])
                authError = AuthError(.invalidArgument, detail: error.status.reasonPhrase)
            }
        case let error as PSQLError:
            authError = Self.map(error, logger: logger)
        default:
            logger.error("unhandled error", metadata: ["error.type": "\(type(of: error))"])
            authError = AuthError(.internalError)
        }
        return authError.envelopeResponse()
    }

    /// Data errors (SQLSTATE class 22, e.g. a NUL byte in text) are the caller's
    /// fault; a lost connection is 503 so clients retry; the rest is ours.
    static func map(_ error: PSQLError, logger: Logger) -> AuthError {
        switch error.code {
        case .server:
            let sqlState = error.serverInfo?[.sqlState] ?? ""
            if sqlState.hasPrefix("22") { return AuthError(.invalidArgument, detail: "Invalid value") }
            if sqlState.hasPrefix("08") || sqlState.hasPrefix("57") { return AuthError(.unavailable) }
            logger.error("database error", metadata: ["sqlstate": "\(sqlState)"])
            return AuthError(.internalError)
        default:
            logger.warning("database unavailable", metadata: ["error.code": "\(error.code)"])
            return AuthError(.unavailable)
        }
    }
}
