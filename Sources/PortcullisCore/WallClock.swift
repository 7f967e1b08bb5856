import Foundation

/// Where services read the time.
///
/// Production uses ``SystemClock``; tests set the time by hand, so the time rules
/// (recent-login windows, refresh grace windows, token expiry, key states) are tested
/// without sleeping.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Timestamp

    /// Returns once ``now()`` has reached `instant` (at once when it has).
    ///
    /// A revocation the gateway makes covers its whole second (``UserUpdate/Revocation``):
    /// the tokens the revoking request hands its caller are issued after that second, and
    /// a sign-in landing inside it starts once it is over, so its tokens survive it.
    func sleep(until instant: Timestamp) async throws
}

/// The system's clock.
public struct SystemClock: WallClock {
    /// The system clock.
    public init() {}

    public func now() -> Timestamp { Timestamp(Date()) }

    public func sleep(until instant: Timestamp) async throws {
        let remaining = instant.microseconds - now().microseconds
        guard remaining > 0 else { return }
        try await Task.sleep(for: .microseconds(remaining))
    }
}
