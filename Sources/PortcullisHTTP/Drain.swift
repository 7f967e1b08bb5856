public import ServiceLifecycle
import Synchronization

/// What a SIGTERM does first: `/readyz` answers 503 while the server still serves, for
/// `listen.drain_seconds`, so a proxy checking it takes this instance out of rotation before
/// its listener closes; only then does the server stop accepting and finish what it has in
/// flight. A rolling restart behind a proxy then fails no request: nothing is sent to a closed
/// port that the proxy still thought ready, and what it sends meanwhile is served.
public final class Drain: Service, Sendable {
    /// How long `/readyz` says 503 before the listener closes (`listen.drain_seconds`).
    public let delay: Duration
    private let draining = Atomic<Bool>(false)

    /// A drain of `delay`.
    public init(delay: Duration) {
        self.delay = delay
    }

    /// Whether shutting down has begun: `/readyz` answers 503.
    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Waits for the graceful shutdown, then marks the instance draining for ``delay``.
    /// Registered after the application, it is the first service to shut down.
    public func run() async {
        // Cancellation (the group ending for another reason) skips the wait: nothing to drain for.
        guard (try? await gracefulShutdown()) != nil else { return }
        draining.store(true, ordering: .relaxed)
        try? await Task.sleep(for: delay)
    }
}
