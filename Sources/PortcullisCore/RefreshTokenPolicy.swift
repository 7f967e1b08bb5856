/// What presenting a refresh token does (supabase/auth's reuse-interval model).
public enum RefreshTokenPolicy {
    /// The stored state of a presented token.
    public struct State: Sendable, Equatable {
        /// The token (or its family) was revoked.
        public var revoked: Bool
        /// When it was rotated (unix seconds), if it was.
        public var rotatedAt: Int64?
        /// When it was issued (unix seconds).
        public var issuedAt: Int64

        /// Creates a state.
        public init(revoked: Bool, rotatedAt: Int64?, issuedAt: Int64) {
            self.revoked = revoked
            self.rotatedAt = rotatedAt
            self.issuedAt = issuedAt
        }
    }

    /// The outcome.
    public enum Decision: Sendable, Equatable {
        /// Rotate: mark this token used and issue its successor.
        case rotate
        /// A replay within the grace window (a client retrying a lost answer): issue another successor.
        case replayWithinGrace
        /// A rotated token came back after the grace window: revoke the whole family.
        case reuseDetected
        /// Revoked: `INVALID_REFRESH_TOKEN`.
        case invalid
        /// Issued before the user's `validSince`: `TOKEN_EXPIRED`.
        case expired
    }

    /// Decides, given the token's state, the user's `validSince`, the time and the grace window.
    public static func decide(_ state: State, validSince: Int64, now: Int64, graceSeconds: Int) -> Decision {
        if state.revoked { return .invalid }
        if SessionPolicy.isRevoked(sessionTime: state.issuedAt, validSince: validSince) { return .expired }
        guard let rotatedAt = state.rotatedAt else { return .rotate }
        return now - rotatedAt <= Int64(graceSeconds) ? .replayWithinGrace : .reuseDetected
    }
}
