public import Hummingbird
public import Logging
public import PortcullisCore
import PortcullisJSON

/// The router's middleware around every route: every error becomes an `AuthError`, which
/// renders itself as the envelope.
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
    /// Caller mistakes stay 4xx: framework errors keep their class; storage has already
    /// turned PostgreSQL's errors into `AuthError`s, or into the `Conflict` a write ran into,
    /// whose code `AuthError.init(_:)` gives, as it gives a `JSONInputError`'s (a body that
    /// could not be read). Anything else is a fault: 500,
    /// logged by type only (never with its payload).
    public init(translating error: any Error, logger: Logger) {
        switch error {
        case let error as AuthError:
            self = error
        case let conflict as Conflict:
            self = AuthError(conflict)
        case let error as JSONInputError:
            self = AuthError(error)
        case let error as HTTPError:
            switch error.status {
            case .notFound: self = AuthError(.notFound)
            case .methodNotAllowed: self = AuthError(.methodNotAllowed)
            case .contentTooLarge: self = AuthError(.payloadTooLarge)
            default: self = AuthError(.invalidArgument, detail: error.status.reasonPhrase)
            }
        default:
            logger.error("unhandled error", metadata: ["error.type": "\(type(of: error))"])
            self = AuthError(.internalError)
        }
    }
}
