public import AsyncHTTPClient
import Foundation

/// Where an ``Auth`` instance signs users in, and how it keeps them.
///
/// One configuration names one (gateway, API key, tenant): an app with several tenants
/// holds an ``Auth`` per tenant, each with its own current user and persisted state.
public struct AuthConfiguration: Sendable {
    /// The gateway's base URL, e.g. `https://auth.example.com` (its end-user paths are
    /// appended: `/v1/accounts:signInWithPassword`).
    public var baseURL: String
    /// The end-user API key (`?key=`).
    public var apiKey: String
    /// The project id: it names the persisted state, so two projects on one machine
    /// never share a signed-in user.
    public var projectId: String
    /// The tenant, or `nil` for the project's own users.
    public var tenantId: String?
    /// Where the signed-in user is kept between runs.
    public var persistence: any AuthPersistence
    /// How long before its expiry an ID token is refreshed: by ``User/idToken(forceRefresh:)``
    /// and, while anyone listens, proactively. Capped at half the token's lifetime, so
    /// short-lived tokens are not refreshed back to back.
    public var refreshAhead: Duration
    /// The HTTP client requests go through.
    public var httpClient: HTTPClient
    /// The limit on each request, connection included.
    public var requestTimeout: Duration

    /// A configuration that keeps the signed-in user in a file under `directory`
    /// (see ``FilePersistence``) unless told otherwise.
    public init(
        baseURL: String, apiKey: String, projectId: String, tenantId: String? = nil,
        persistence: (any AuthPersistence)? = nil, refreshAhead: Duration = .seconds(300),
        httpClient: HTTPClient = .shared, requestTimeout: Duration = .seconds(30)
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.apiKey = apiKey
        self.projectId = projectId
        self.tenantId = tenantId
        self.persistence = persistence ?? FilePersistence()
        self.refreshAhead = refreshAhead
        self.httpClient = httpClient
        self.requestTimeout = requestTimeout
    }

    /// The name this configuration's state is kept under: one per (project, tenant, API key).
    public var persistenceKey: String {
        // `_` alone never comes out of `fileSafe`: project users cannot collide with a tenant.
        [Self.fileSafe(projectId), tenantId.map(Self.fileSafe) ?? "_", Self.fileSafe(apiKey)].joined(separator: ".")
    }

    /// Letters, digits and `-` kept; every other byte as `_XX` (hex), so distinct parts
    /// stay distinct and none can name a path (`/`, `..`).
    private static func fileSafe(_ part: String) -> String {
        var name = ""
        for byte in part.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                name += "_" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return name
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
