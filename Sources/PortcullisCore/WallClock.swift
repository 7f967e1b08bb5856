/// Where services read the time.
///
/// Production uses ``SystemClock``; tests set the time by hand, so the time rules
/// (recent-login windows, refresh grace windows, token expiry, key states) are tested
/// without sleeping.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Timestamp
}

/// The system's clock.
public struct SystemClock: WallClock {
    /// The system clock.
    public init() {}

    public func now() -> Timestamp { Timestamp.now() }
}
