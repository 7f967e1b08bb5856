import Logging
import PostgresNIO
import Synchronization

/// One unit of work: a connection inside `BEGIN … COMMIT` (``Database/withTransaction(function:_:)``),
/// and the invalidation events the work announces.
///
/// An announced event is queued with `pg_notify` in the transaction, so other instances hear
/// of it only if it commits, and delivered to this instance's own subscribers the moment it
/// commits: caches follow commits, and no service has to update one by hand.
public struct Transaction: Sendable {
    let connection: PostgresConnection
    let announcements: Announcements

    /// Runs a statement in the transaction.
    @discardableResult
    func query(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        try await connection.query(query, logger: logger, file: file, line: line)
    }

    /// Runs a prepared statement in the transaction and returns its rows.
    func execute<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [Statement.Row] {
        var rows: [Statement.Row] = []
        for try await row in try await connection.execute(statement, logger: logger, file: file, line: line) { rows.append(row) }
        return rows
    }

    /// Announces that the transaction changes what `events` describe.
    func announce(_ events: InvalidationEvent..., logger: Logger) async throws {
        try await announce(events, logger: logger)
    }

    /// Announces all of `events`, in one statement.
    func announce(_ events: [InvalidationEvent], logger: Logger) async throws {
        guard !events.isEmpty else { return }
        try await connection.query(
            "SELECT pg_notify(\(InvalidationEvent.channel), payload) FROM unnest(\(events.map(\.payload))::text[]) AS payload",
            logger: logger)
        announcements.record(events)
    }

    /// The events a transaction announced, kept for delivery once it commits.
    final class Announcements: Sendable {
        private let events = Mutex<[InvalidationEvent]>([])

        func record(_ announced: [InvalidationEvent]) {
            events.withLock { $0 += announced }
        }

        /// The events, once: a transaction delivers them at most once.
        func take() -> [InvalidationEvent] {
            events.withLock { events in
                defer { events = [] }
                return events
            }
        }
    }
}
