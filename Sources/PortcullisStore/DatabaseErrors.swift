import Logging
import PortcullisCore
import PostgresNIO

/// A unique index refused a write: the repository that made it decides what it means
/// (`EMAIL_EXISTS`, `DUPLICATE_LOCAL_ID`, …).
public struct UniqueViolation: Error, Sendable {
    /// The index or constraint, e.g. `users_email_unique`.
    public let constraint: String?
}

/// How PostgreSQL's errors become domain errors: the one place that knows SQLSTATE.
///
/// Caller mistakes stay 4xx (data errors, SQLSTATE class 22, such as a NUL byte in text,
/// are `INVALID_ARGUMENT`); a lost server or a pool that cannot connect is
/// `UNAVAILABLE` (503, clients retry); anything else is a fault, logged by SQLSTATE
/// only (never with values) and answered `INTERNAL_ERROR`.
enum DatabaseErrors {
    /// An error from a statement (or `BEGIN`/`COMMIT`); others pass through unchanged.
    static func translate(_ error: any Error, logger: Logger) -> any Error {
        guard let error = error as? PSQLError else { return error }
        switch error.code {
        case .server:
            let sqlState = error.serverInfo?[.sqlState] ?? ""
            if sqlState == "23505" { return UniqueViolation(constraint: error.serverInfo?[.constraintName]) }
            if sqlState.hasPrefix("22") { return AuthError(.invalidArgument, detail: "Invalid value") }
            if sqlState.hasPrefix("08") || sqlState.hasPrefix("57") { return AuthError(.unavailable) }
            logger.error("database error", metadata: ["sqlstate": "\(sqlState)"])
            return AuthError(.internalError)
        case .queryCancelled:
            return CancellationError()
        default:
            logger.warning("database unavailable", metadata: ["error.code": "\(error.code)"])
            return AuthError(.unavailable)
        }
    }

    /// What an operator needs to know of a failure, never a parameter value: the server's
    /// SQLSTATE and message, or what the client saw (a refused or dropped connection).
    static func describe(_ error: any Error) -> Logger.Metadata {
        guard let error = error as? PSQLError else { return ["reason": "\(error)"] }
        switch error.code {
        case .server:
            return [
                "sqlstate": "\(error.serverInfo?[.sqlState] ?? "")", "message": "\(error.serverInfo?[.message] ?? "")",
            ]
        case .connectionError:
            return ["reason": "\(error.underlying.map { "\($0)" } ?? "connection failed")"]
        default:
            return ["reason": "\(error.code)"]
        }
    }

    /// An error from leasing a connection: the pool's own failures (it cannot connect, it is
    /// shutting down) are the database being unavailable, not a fault of the request.
    static func translateLease(_ error: any Error, logger: Logger) -> any Error {
        switch error {
        case is CancellationError, is AuthError: error
        case let error as PSQLError where error.code == .queryCancelled: CancellationError()
        default: AuthError(.unavailable)
        }
    }
}

/// PostgreSQL could not be reached or refused the connection; says where and why, never the password.
public struct DatabaseUnreachable: Error, CustomStringConvertible {
    /// The server's address.
    public let host: String
    /// The server's port.
    public let port: Int
    /// What went wrong, in words.
    public let reason: String

    init(settings: DatabaseSettings, underlying: any Error) {
        host = settings.host
        port = settings.port
        reason = Self.describe(underlying, tls: settings.effectiveTLSMode)
    }

    public var description: String { "cannot connect to PostgreSQL at \(host):\(port): \(reason)" }

    private static func describe(_ error: any Error, tls: DatabaseSettings.TLSMode) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        switch error.code {
        case .sslUnsupported: return "the server does not offer TLS, which database.tls \(tls.rawValue) requires"
        case .failedToAddSSLHandler: return "TLS could not be set up"
        case .server: return error.serverInfo?[.message] ?? "the server refused the connection"
        case .connectionError: return error.underlying.map { "\($0)" } ?? "connection failed"
        default: return "\(error.code)"
        }
    }
}
