public import PortcullisCore
public import PortcullisCrypto
public import ServiceLifecycle
import Synchronization

/// Signing keys made ahead of need, so a new tenant's first request costs no key generation
/// (DESIGN.md §7: a brand-new tenant's first sign-in within one hash + 20 ms; an RSA-2048
/// key takes tens to hundreds of milliseconds of CPU).
///
/// Holds up to `size` keys of each algorithm. ``take(_:)`` hands one out at once and wakes
/// the service, which makes the next on a thread below the hashing threads
/// (`SigningKey.generateAhead(_:)`); only when a burst of new tenants has emptied the pool
/// does a caller make its key itself, at normal priority. The keys live in memory only, as
/// the keyrings' opened keys do, and each is handed out once.
public final class SigningKeyPool: Service {
    /// The most keys of each algorithm held.
    public let size: Int
    private let generate: @Sendable (TenantSettings.SigningAlgorithm) async throws -> SigningKey
    private let makeAhead: @Sendable (TenantSettings.SigningAlgorithm) async throws -> SigningKey
    private let keys = Mutex<[TenantSettings.SigningAlgorithm: [SigningKey]]>([:])
    private let wakeups = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    /// A pool of `size` keys per algorithm, made ahead below the hashing threads, and on the
    /// caller's path with ``KeyringService/generate(_:)`` when empty; 0 makes every key on demand.
    public convenience init(size: Int = 4) {
        self.init(size: size, generate: KeyringService.generate, makeAhead: SigningKey.generateAhead)
    }

    /// A pool of `size` keys per algorithm, made by `generate` on the caller's path and by
    /// `makeAhead` (`generate` when `nil`, as when a test counts them) in the background.
    public init(
        size: Int = 4,
        generate: @escaping @Sendable (TenantSettings.SigningAlgorithm) async throws -> SigningKey,
        makeAhead: (@Sendable (TenantSettings.SigningAlgorithm) async throws -> SigningKey)? = nil
    ) {
        self.size = max(0, size)
        self.generate = generate
        self.makeAhead = makeAhead ?? generate
        // The first fill starts as soon as the service runs.
        wakeups.continuation.yield()
    }

    /// A key of `algorithm`: a pooled one at once, or, with the pool empty, one made now.
    public func take(_ algorithm: TenantSettings.SigningAlgorithm) async throws -> SigningKey {
        let pooled = keys.withLock { $0[algorithm]?.popLast() }
        wakeups.continuation.yield()
        if let pooled { return pooled }
        return try await generate(algorithm)
    }

    /// Keys of `algorithm` ready to be taken.
    public func available(_ algorithm: TenantSettings.SigningAlgorithm) -> Int {
        keys.withLock { $0[algorithm]?.count ?? 0 }
    }

    /// Fills the pool, and fills it again each time keys are taken, until shut down (with
    /// `size` 0 it only waits: a service that returned would end the daemon's service group).
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            for await _ in self.wakeups.stream {
                await self.fill()
            }
        }
    }

    /// Makes keys until every algorithm has `size`; a failure (a stopping thread pool) leaves
    /// the rest to the next wakeup, and callers meanwhile make their own.
    private func fill() async {
        for algorithm in TenantSettings.SigningAlgorithm.allCases {
            while !Task.isCancelled, available(algorithm) < size {
                guard let key = try? await makeAhead(algorithm) else { return }
                keys.withLock { $0[algorithm, default: []].append(key) }
            }
        }
    }
}
