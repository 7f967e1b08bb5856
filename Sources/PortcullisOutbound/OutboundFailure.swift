/// Why an outbound request produced no usable answer.
///
/// The description names the host and the reason, never the URL's path or query:
/// user-info URLs and webhook URLs can carry secrets, and these messages reach logs and
/// (as the detail of `INVALID_IDP_RESPONSE`) API clients. A destination the network
/// policy refused is only "not allowed" there: naming the address a tenant's URL resolved
/// to would let a tenant admin map the operator's internal DNS through JWKS, user-info
/// and webhook URLs. ``logDescription`` adds the policy's reason, for the operator's log.
public struct OutboundFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL's host (empty when the URL did not parse).
    public var host: String
    /// What went wrong.
    public var kind: Kind

    /// The kinds of failure.
    public enum Kind: Sendable, Equatable {
        /// The URL is not an absolute http(s) URL with a host.
        case invalidURL
        /// The network policy refused the destination (the reason names the address: for
        /// ``OutboundFailure/logDescription`` only).
        case refusedByPolicy(reason: String)
        /// The host did not resolve, or no connection (or TLS session) could be made.
        case unreachable(reason: String)
        /// The exchange did not finish within the connect timeout or the deadline.
        case timedOut
        /// The body was larger than the cap (bytes).
        case tooLarge(limit: Int)
        /// The server answered with a redirect, which outbound requests never follow.
        case redirected(status: Int)
        /// The server answered with a status outside 2xx (and not a redirect).
        case badStatus(Int)
    }

    /// A failure for `host`.
    public init(host: String, kind: Kind) {
        self.host = host
        self.kind = kind
    }

    public var description: String {
        switch kind {
        case .invalidURL: "the URL is not an absolute http or https URL"
        case .refusedByPolicy: "\(host) is not an allowed destination"
        case .unreachable(let reason): "\(host) is unreachable: \(reason)"
        case .timedOut: "\(host) did not answer in time"
        case .tooLarge(let limit): "\(host) answered with more than \(limit) bytes"
        case .redirected(let status): "\(host) answered with a redirect (\(status)), which is not followed"
        case .badStatus(let status): "\(host) answered with status \(status)"
        }
    }

    /// The description with what only the operator may read: why the policy refused.
    public var logDescription: String {
        if case .refusedByPolicy(let reason) = kind { return "\(description) (\(reason))" }
        return description
    }
}
