import Logging
import PortcullisCore
import PostgresNIO

/// How PostgreSQL's errors become domain errors: the one place that knows SQLSTATE.
///
/// A unique index's refusal is the `Conflict` its index enforces (the uniqueness rules of
/// the model: emails, uids and federated identities per tenant, one configuration per
/// provider, one service account per key id); services decide what it means to their caller.
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
            if sqlState == "23505" { return conflict(enforcedBy: error.serverInfo?[.constraintName], logger: logger) }
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

    /// The rule the unique index `constraint` enforces; another index refusing a write (ids
    /// drawn at random) is a fault.
    static func conflict(enforcedBy constraint: String?, logger: Logger) -> any Error {
        switch constraint {
        case "users_email_unique": return Conflict.emailTaken
        case "users_pkey": return Conflict.uidTaken
        case "user_providers_pkey": return Conflict.identityLinked
        case "service_accounts_pkey": return Conflict.serviceAccountKeyTaken
        case "identity_providers_pkey": return Conflict.providerConfigured
        default:
            logger.error("database error", metadata: ["sqlstate": "23505", "constraint": "\(constraint ?? "")"])
            return AuthError(.internalError)
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
