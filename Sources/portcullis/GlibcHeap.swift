import PortcullisCrypto
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// How the daemon keeps glibc's heap small: few arenas, and freed memory handed back.
///
/// Each scrypt hash allocates 16 MiB; glibc keeps freed blocks that large in its
/// arenas once its mmap threshold has adapted upwards, and it gives busy threads
/// arenas of their own (up to eight per core), each holding on to what its thread
/// freed. After a burst of sign-ins and refreshes an idle daemon would stay tens of
/// megabytes larger than it needs. Both calls are looked up at run time: they are
/// glibc's, absent from Swift's Glibc module and from other C libraries.
enum GlibcHeap {
    /// Caps the number of malloc arenas (`M_ARENA_MAX`); call before the threads start.
    /// Two suffice here: small allocations are served from per-thread caches anyway.
    static func limitArenas(to count: Int32) {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        let arenaMax: Int32 = -8  // M_ARENA_MAX in <malloc.h>
        _ = mallopt(arenaMax, count)
        #endif
    }

    /// Returns free heap pages to the kernel (`malloc_trim(0)`).
    static func trim() {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        _ = trim(0)
        #endif
    }
}

/// Trims the heap every `interval`, once password hashing has been quiet for `hashingQuiet`.
///
/// A hash allocates 16 MiB, which glibc keeps for the next one; trimmed, the next hash faults
/// every page of it in again — about 7 ms here, and tens of milliseconds when the host has
/// reclaimed the pages — so while sign-ins keep coming their memory stays, and an idle daemon
/// still hands it back.
struct MemoryTrimService: Service {
    let interval: Duration
    let hashing: PasswordHashingService
    let hashingQuiet: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                    while !hashing.isQuiet(for: hashingQuiet) { try await Task.sleep(for: hashingQuiet) }
                } catch { return }
                GlibcHeap.trim()
            }
        }
    }
}
