#if canImport(Glibc)
import Glibc
#endif
import ServiceLifecycle

/// Returns freed heap memory to the kernel every half minute.
///
/// Each scrypt hash allocates 16 MiB; glibc keeps freed blocks that large in
/// its per-thread arenas once its mmap threshold has adapted upwards, so a
/// burst of sign-ins would otherwise leave the idle daemon tens of megabytes
/// larger. Trimming later (not per hash) keeps hashing itself fast.
struct MemoryTrimService: Service {
    let interval: Duration

    func run() async throws {
        // glibc's malloc_trim is not in Swift's Glibc module; look it up (absent on other C libraries).
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                _ = trim(0)
            }
        }
        #endif
    }
}
