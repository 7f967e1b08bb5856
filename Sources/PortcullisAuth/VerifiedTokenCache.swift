import PortcullisCrypto
public import PortcullisStore
import Synchronization

/// ID tokens whose signature, issuer and audience already checked out on this
/// instance, so a token presented again skips parsing and signature verification.
///
/// Forward auth sees the same token on every request of a session for its whole
/// lifetime, and an RSA verification costs more than the rest of `/v1/verify`.
/// The cache memoises a pure function of the token's exact bytes and the tenant's
/// published keys: a hit needs a token with the same SHA-256 (the key it is
/// remembered by, 32 bytes instead of the token's ~1 KB), expiry is still
/// checked on every use, and any change to a tenant's keys or the tenant's
/// deletion (a NOTIFY) empties it. Two generations bound it: when the current one
/// fills, it becomes the previous one and the oldest tokens fall out.
public final class VerifiedTokenCache: InvalidationSubscriber {
    private struct Generations {
        var current: [TokenFingerprint: IDTokenClaims] = [:]
        var previous: [TokenFingerprint: IDTokenClaims] = [:]
        /// Bumped by every invalidation (see ``GuardedCache``).
        var invalidations: UInt64 = 0
    }

    private let generations = Mutex(Generations())
    private let capacity: Int

    /// A cache holding at most `2 × capacity` tokens' claims (well under 1 KB each).
    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// The claims of the token with this fingerprint if it verified before.
    func claims(of token: TokenFingerprint) -> IDTokenClaims? {
        generations.withLock { generations in
            if let claims = generations.current[token] { return claims }
            guard let claims = generations.previous.removeValue(forKey: token) else { return nil }
            Self.insert(token, claims, into: &generations, capacity: capacity)
            return claims
        }
    }

    /// A stamp to take before verifying a token, for ``remember(_:_:ifGeneration:)``.
    var generation: UInt64 { generations.withLock { $0.invalidations } }

    /// Records a token whose signature and claims just verified, unless the keys changed
    /// (an invalidation) since `generation` was taken: the verification may have used
    /// keys that are gone now.
    func remember(_ token: TokenFingerprint, _ claims: IDTokenClaims, ifGeneration generation: UInt64) {
        generations.withLock { generations in
            guard generations.invalidations == generation else { return }
            Self.insert(token, claims, into: &generations, capacity: capacity)
        }
    }

    private static func insert(_ token: TokenFingerprint, _ claims: IDTokenClaims, into generations: inout Generations, capacity: Int) {
        if generations.current.count >= capacity {
            generations.previous = generations.current
            generations.current = [:]
        }
        generations.current[token] = claims
    }

    public func invalidate(_ event: InvalidationEvent) {
        switch event {
        case .signingKeys, .tenant(_, 0): invalidateAll()
        default: return
        }
    }

    /// Forward auth verifies with it through a database outage.
    public var keptThroughOutage: Bool { true }

    public func invalidateAll() {
        generations.withLock { $0 = Generations(invalidations: $0.invalidations &+ 1) }
    }
}
