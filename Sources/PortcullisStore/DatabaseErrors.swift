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
            if sqlState == readOnlySQLState {
                // A standby, or a primary being demoted: the database looks for the new primary.
                logger.warning("a write reached a read-only PostgreSQL server", metadata: ["sqlstate": "\(sqlState)"])
                return AuthError(.unavailable)
            }
            logger.error("database error", metadata: ["sqlstate": "\(sqlState)"])
            return AuthError(.internalError)
        case .queryCancelled:
            return CancellationError()
        default:
            logger.warning("database unavailable", metadata: ["error.code": "\(error.code)"])
            return AuthError(.unavailable)
        }
    }

    /// `read_only_sql_transaction`: a write sent to a server in recovery.
    static let readOnlySQLState = "25006"

    /// Whether `error` is a server refusing work for want of resources (SQLSTATE class 53:
    /// too many connections, out of memory or disk): it is up, if busy.
    static func isOverloaded(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState]?.hasPrefix("53") == true
    }

    /// Whether `error` is a write refused by a server in recovery (``readOnlySQLState``).
    static func isReadOnly(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == readOnlySQLState
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

/// No server of the settings takes writes: each could not be reached, refused the login, or
/// is read-only (a standby). Says which server answered what, never the password.
public struct DatabaseUnreachable: Error, CustomStringConvertible {
    /// Each server tried, in the settings' order, and why it was passed over.
    public let attempts: [(endpoint: DatabaseSettings.Endpoint, reason: String)]

    init(attempts: [(endpoint: DatabaseSettings.Endpoint, reason: String)]) {
        self.attempts = attempts
    }

    public var description: String {
        if attempts.count == 1, let only = attempts.first {
            return "cannot use PostgreSQL at \(only.endpoint): \(only.reason)"
        }
        return "no PostgreSQL server accepts writes: " + attempts.map { "\($0.endpoint): \($0.reason)" }.joined(separator: "; ")
    }

    /// A failure to connect, in words.
    static func describe(_ error: any Error, tls: DatabaseSettings.TLSMode) -> String {
        guard let error = error as? PSQLError else {
            return error is CallDeadline.Expired ? "no answer within \(Database.checkTimeout)" : "\(error)"
        }
        switch error.code {
        case .sslUnsupported: return "the server does not offer TLS, which database.tls \(tls.rawValue) requires"
        case .failedToAddSSLHandler: return "TLS could not be set up"
        case .server: return error.serverInfo?[.message] ?? "the server refused the connection"
        case .connectionError: return error.underlying.map { "\($0)" } ?? "connection failed"
        default: return "\(error.code)"
        }
    }
}
