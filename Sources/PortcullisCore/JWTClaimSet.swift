public import PortcullisJSON

/// A JWT payload's registered claims, read as RFC 7519 defines them.
///
/// The one reader the gateway's token checks share — its own ID tokens, identity providers'
/// `id_token`s, custom tokens — so `aud` and the times mean the same in each: `aud` is one
/// string or an array of them, a NumericDate is a JSON number of seconds (a fractional one
/// is cut, as JWT libraries read it), and a claim of the wrong type is absent. What a
/// check requires of them, and how it words a refusal, stays the caller's.
public struct JWTClaimSet: Sendable {
    /// The payload's members.
    public let members: [String: JSONValue]

    /// The claims of a payload (a verified one: this reads, it proves nothing).
    public init(_ members: [String: JSONValue]) {
        self.members = members
    }

    /// A string claim; `nil` when absent or not a string.
    public func string(_ name: String) -> String? {
        guard case .string(let value)? = members[name] else { return nil }
        return value
    }

    /// The audiences `aud` names: its string, or the strings of its array; none otherwise.
    public var audiences: [String] {
        switch members["aud"] {
        case .string(let audience)?: [audience]
        case .array(let items)?: items.compactMap { if case .string(let audience) = $0 { audience } else { nil } }
        default: []
        }
    }

    /// Whether `aud` names one of `accepted`.
    public func isAddressed(to accepted: Set<String>) -> Bool {
        !accepted.isDisjoint(with: audiences)
    }

    /// A NumericDate claim in whole seconds; `nil` when absent or not a number.
    public func numericDate(_ name: String) -> Int64? {
        switch members[name] {
        case .integer(let seconds)?: seconds
        case .double(let seconds)? where seconds.isFinite && abs(seconds) < 1e15: Int64(seconds)
        default: nil
        }
    }

    /// Why a token is not live.
    public enum Lapse: Sendable, Equatable {
        /// `exp` is missing or not a NumericDate.
        case noExpiry
        /// `exp` has passed.
        case expired
        /// `iat` is missing or not a NumericDate.
        case noIssueTime
        /// `iat` is ahead of now.
        case issuedInFuture
        /// `nbf` is present and ahead of now (or not a NumericDate).
        case notYetValid
    }

    /// The first reason the token is not live at `now` (unix seconds), or `nil`.
    ///
    /// - Parameters:
    ///   - now: the gateway's time.
    ///   - expiryLeeway: how long after `exp` the token still counts (the issuer's clock may
    ///     run behind the gateway's); 0 for tokens the gateway judges on its own clock.
    ///   - issueLeeway: how far ahead of `now` `iat` and `nbf` may be (the issuer's clock may
    ///     run ahead).
    public func lapse(at now: Int64, expiryLeeway: Int64 = 0, issueLeeway: Int64) -> Lapse? {
        guard let expiry = numericDate("exp") else { return .noExpiry }
        guard expiry > now - expiryLeeway else { return .expired }
        guard let issuedAt = numericDate("iat") else { return .noIssueTime }
        guard issuedAt <= now + issueLeeway else { return .issuedInFuture }
        if members["nbf"] != nil, members["nbf"] != .null {
            guard let notBefore = numericDate("nbf"), notBefore <= now + issueLeeway else { return .notYetValid }
        }
        return nil
    }
}
