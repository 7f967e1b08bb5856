/// What presenting a refresh token does (supabase/auth's reuse-interval model,
/// with one stored row per session).
public enum RefreshTokenPolicy {
    /// Which of the session's secrets the presented token carries.
    public enum Presented: Sendable, Equatable {
        /// The session's current token.
        case current
        /// The token the current one replaced.
        case previous
        /// Neither: a token rotated away more than once (or a made-up secret for a real session).
        case older
    }

    /// The stored state of the presented token's session.
    public struct State: Sendable, Equatable {
        /// Which token was presented.
        public var presented: Presented
        /// The session was revoked (reuse was detected).
        public var revoked: Bool
        /// When the session started (the sign-in): what revocation judges.
        public var started: Timestamp
        /// When the current token was issued (unix seconds): at sign-in, then at each
        /// rotation. Only the grace window reads it.
        public var issuedAt: Int64

        /// Creates a state.
        public init(presented: Presented, revoked: Bool, started: Timestamp, issuedAt: Int64) {
            self.presented = presented
            self.revoked = revoked
            self.started = started
            self.issuedAt = issuedAt
        }
    }

    /// The outcome.
    public enum Decision: Sendable, Equatable {
        /// Rotate: the successor becomes the current token.
        case rotate
        /// The previous token again, within the grace window of its rotation (a client
        /// retrying a lost answer, two tabs at once): answer with the current token again.
        /// The window's clock stops while PostgreSQL is unreachable (``graceSpent(since:now:outages:)``).
        case replayWithinGrace
        /// A rotated token came back after the grace window: revoke the session.
        case reuseDetected
        /// Revoked: `INVALID_REFRESH_TOKEN`.
        case invalid
        /// The session started before the user's `validSince`: `TOKEN_EXPIRED`.
        case expired
    }

    /// Decides, given the session's state, the user's `validSince`, the time, the grace window
    /// and the periods this instance found PostgreSQL unreachable (unix seconds, not overlapping).
    public static func decide(
        _ state: State, validSince: Timestamp, now: Int64, graceSeconds: Int, outages: [Range<Int64>] = []
    ) -> Decision {
        if state.revoked { return .invalid }
        if SessionPolicy.isRevoked(sessionStart: state.started, validSince: validSince) { return .expired }
        switch state.presented {
        case .current: return .rotate
        case .previous:
            return graceSpent(since: state.issuedAt, now: now, outages: outages) <= Int64(graceSeconds)
                ? .replayWithinGrace : .reuseDetected
        case .older: return .reuseDetected
        }
    }

    /// The grace window spent since a rotation at `issuedAt`: the seconds since, less those
    /// PostgreSQL was unreachable meanwhile.
    ///
    /// Why outages do not count: a rotation that committed as its primary froze or crashed
    /// (the synchronous standby had it, and was promoted) was answered 503, so its client
    /// still holds the rotated token and presents it again once the database is back. A
    /// failover takes longer than the window, and counting it would end, as a reuse, every
    /// session whose refresh was in flight. The window stays as short in the time the
    /// database answers: an outage only does not close it early on an attacker's replay.
    public static func graceSpent(since issuedAt: Int64, now: Int64, outages: [Range<Int64>]) -> Int64 {
        let unreachable = outages.reduce(Int64(0)) { total, outage in
            total + max(0, min(outage.upperBound, now) - max(outage.lowerBound, issuedAt))
        }
        return now - issuedAt - unreachable
    }
}
