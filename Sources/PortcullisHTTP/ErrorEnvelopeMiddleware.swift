public import Hummingbird
import Logging
public import PortcullisCore
import PostgresNIO

/// The first middleware of the router: every error becomes an ``AuthError``,
/// which renders itself as the envelope.
///
/// It also wraps the router's not-found responder, so unknown paths and
/// methods answer with the envelope like everything else.
public struct ErrorEnvelopeMiddleware: RouterMiddleware {
    public typealias Context = PortcullisRequestContext

    /// Creates the middleware.
    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            throw AuthError(translating: error, logger: context.logger)
        }
    }
}

extension AuthError {
    /// The wire error for anything thrown while serving a request.
    ///
    /// Caller mistakes stay 4xx: framework errors keep their class, and data
    /// errors from PostgreSQL (SQLSTATE class 22, e.g. a NUL byte in text) are
    /// `INVALID_ARGUMENT`. A lost database is 503 so clients retry; only
    /// genuine faults are 500, and are logged without their payload.
    public init(translating error: any Error, logger: Logger) {
        switch error {
        case let error as AuthError:
            self = error
        case let error as HTTPError:
            switch error.status {
            case .notFound: self = AuthError(.notFound)
            case .methodNotAllowed: self = AuthError(.methodNotAllowed)
            case .contentTooLarge: self = AuthError(.payloadTooLarge)
            default: self = AuthError(.invalidArgument, detail: error.status.reasonPhrase)
            }
        case let error as PSQLError:
            self = AuthError(translating: error, logger: logger)
        default:
            logger.error("unhandled error", metadata: ["error.type": "\(type(of: error))"])
            self = AuthError(.internalError)
        }
    }

    private init(translating error: PSQLError, logger: Logger) {
        switch error.code {
        case .server:
            let sqlState = error.serverInfo?[.sqlState] ?? ""
            if sqlState.hasPrefix("22") {
                self = AuthError(.invalidArgument, detail: "Invalid value")
            } else if sqlState.hasPrefix("08") || sqlState.hasPrefix("57") {
                self = AuthError(.unavailable)
            } else {
                logger.error("database error", metadata: ["sqlstate": "\(sqlState)"])
                self = AuthError(.internalError)
            }
        default:
            logger.warning("database unavailable", metadata: ["error.code": "\(error.code)"])
            self = AuthError(.unavailable)
        }
    }
}
