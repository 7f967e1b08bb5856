import CLinuxScheduling
import NIOPosix
public import PortcullisCore

extension SigningKey {
    /// The nice value of the thread that makes keys ahead of need: below every hashing thread's
    /// (0 and 6), so a refill yields the CPU to the sign-ins and requests it would otherwise slow.
    static let aheadNice: Int32 = 10

    /// A key made on a thread of its own, below the hashing threads, for keys made ahead of need
    /// (the daemon's pool of first keys for new tenants).
    ///
    /// A new tenant's first request takes a pooled key and wakes the refill at once; at normal
    /// priority an RSA-2048 key (tens to hundreds of milliseconds of CPU) then competed with
    /// that very request's password hash on a 2-core host (BENCHMARKS.md). Niced, the refill
    /// takes what sign-ins leave; a host too busy to leave any still refills slowly, and a key
    /// needed before then is made on the caller's path at normal priority.
    public static func generateAhead(_ algorithm: TenantSettings.SigningAlgorithm) async throws -> SigningKey {
        try await runAhead { try generate(algorithm) }
    }

    /// Runs `work` on the thread keys are made ahead on, at ``aheadNice``.
    static func runAhead<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await aheadThread.runIfActive {
            // Idempotent; a failure leaves the thread at the default priority.
            _ = c_linux_schedule_fair(aheadNice, 0)
            // Its CPU is no sign of busy request threads for the hashing pool to yield to.
            BackgroundThreads.adoptCurrent()
            return try work()
        }
    }

    /// One thread: keys made ahead are made one at a time, and never hold up other blocking work.
    private static let aheadThread: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()
}
