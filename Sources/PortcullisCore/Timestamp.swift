public import Foundation

/// A wall-clock instant to the microsecond: the resolution at which session
/// starts and revocation watermarks are kept, so a revocation and a sign-in in
/// the same second still order correctly. The wire shows whole seconds.
public struct Timestamp: Sendable, Hashable, Comparable {
    /// Microseconds since the Unix epoch.
    public var microseconds: Int64

    /// An instant from microseconds since the Unix epoch.
    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// The start of the given Unix second.
    public init(seconds: Int64) {
        self.microseconds = seconds * 1_000_000
    }

    /// The instant of a `Date`, truncated to the microsecond.
    public init(_ date: Date) {
        self.microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
    }

    /// The Unix second this instant falls in (what `validSince`, `iat` and `auth_time` show).
    public var seconds: Int64 { microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000 }

    /// Milliseconds since the epoch (Identity Toolkit's `createdAt` and `lastLoginAt`).
    public var milliseconds: Int64 { microseconds >= 0 ? microseconds / 1_000 : (microseconds - 999) / 1_000 }

    /// The same instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(microseconds) / 1_000_000) }

    /// This instant moved by `seconds`.
    public func adding(seconds: Int64) -> Timestamp { Timestamp(microseconds: microseconds + seconds * 1_000_000) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.microseconds < rhs.microseconds }
}
