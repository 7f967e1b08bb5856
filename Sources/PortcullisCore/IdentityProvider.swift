/// A federated identity provider's configuration for one tenant (or the project's users):
/// Identity Platform's `defaultSupportedIdpConfigs` (built-in providers) and
/// `oauthIdpConfigs` (`oidc.<name>`), with Portcullis's fields (DESIGN.md §2).
///
/// Built-in providers need only a client id: the issuer, JWKS and user-info URLs default
/// to the real provider's published ones (``IdentityProvider/defaults(for:)``).
public struct IdentityProvider: Sendable, Equatable {
    /// `google.com`, `apple.com`, … or `oidc.<name>`.
    public var providerId: String
    /// Human-readable name.
    public var displayName: String?
    /// Disabled providers refuse every sign-in (`OPERATION_NOT_ALLOWED`).
    public var enabled: Bool
    /// The OAuth client id: the audience the provider's ID tokens must name.
    public var clientId: String
    /// Further accepted audiences (e.g. the iOS and web client ids of one app).
    public var clientIds: [String]
    /// The `iss` the provider's ID tokens carry; `nil`: the built-in default.
    public var issuer: String?
    /// Where the provider publishes its keys; `nil`: the built-in default.
    public var jwksURI: String?
    /// The user-info endpoint that resolves access tokens; `nil`: the built-in default.
    public var userInfoURI: String?
    /// The OAuth client secret: stored, never returned. For `apple.com`, the Sign in with
    /// Apple client secret (a JWT the developer signs), which revoking a user's token needs.
    public var clientSecret: String?
    /// Where the provider revokes a user's token (`accounts:revokeToken`); `nil`: the
    /// built-in default (Apple's).
    public var revocationURI: String?

    /// A provider configuration.
    public init(
        providerId: String, displayName: String? = nil, enabled: Bool = true, clientId: String, clientIds: [String] = [],
        issuer: String? = nil, jwksURI: String? = nil, userInfoURI: String? = nil, clientSecret: String? = nil,
        revocationURI: String? = nil
    ) {
        self.providerId = providerId
        self.displayName = displayName
        self.enabled = enabled
        self.clientId = clientId
        self.clientIds = clientIds
        self.issuer = issuer
        self.jwksURI = jwksURI
        self.userInfoURI = userInfoURI
        self.clientSecret = clientSecret
        self.revocationURI = revocationURI
    }

    /// The built-in federated providers (`defaultSupportedIdpConfigs`).
    public static let builtIn: [String] = [
        "google.com", "apple.com", "microsoft.com", "yahoo.com", "facebook.com", "github.com", "twitter.com",
    ]

    /// Whether `providerId` names a generic OIDC provider: `oidc.` and 1–64 of `[A-Za-z0-9_.-]`.
    public static func isOIDC(_ providerId: String) -> Bool {
        guard providerId.hasPrefix("oidc.") else { return false }
        let name = providerId.utf8.dropFirst(5)
        return (1...64).contains(name.count)
            && name.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }

    /// Whether `providerId` names a federated provider: a built-in one or a generic OIDC one.
    public static func isFederated(_ providerId: String) -> Bool {
        builtIn.contains(providerId) || isOIDC(providerId)
    }

    /// Every audience an ID token may name: ``clientId`` and ``clientIds``.
    public var audiences: Set<String> { Set([clientId] + clientIds) }

    /// The published endpoints of a built-in provider (`nil` for `oidc.*` providers, which
    /// must configure their own).
    public struct Defaults: Sendable, Equatable {
        /// The `iss` of its ID tokens (`nil`: it issues none, or the issuer varies per
        /// directory, as Microsoft's does: checked against ``IdentityProvider/issuer`` only).
        public var issuer: String?
        /// Its JWKS.
        public var jwksURI: String?
        /// Its user-info endpoint for access tokens.
        public var userInfoURI: String?
        /// Its token revocation endpoint (RFC 7009), where it has one a client may call.
        public var revocationURI: String?
    }

    /// The real provider's published endpoints.
    public static func defaults(for providerId: String) -> Defaults? {
        switch providerId {
        case "google.com":
            Defaults(
                issuer: "https://accounts.google.com", jwksURI: "https://www.googleapis.com/oauth2/v3/certs",
                userInfoURI: "https://openidconnect.googleapis.com/v1/userinfo")
        case "apple.com":
            Defaults(
                issuer: "https://appleid.apple.com", jwksURI: "https://appleid.apple.com/auth/keys",
                revocationURI: "https://appleid.apple.com/auth/revoke")
        case "microsoft.com":
            Defaults(
                jwksURI: "https://login.microsoftonline.com/common/discovery/v2.0/keys",
                userInfoURI: "https://graph.microsoft.com/oidc/userinfo")
        case "yahoo.com":
            Defaults(
                issuer: "https://api.login.yahoo.com", jwksURI: "https://api.login.yahoo.com/openid/v1/certs",
                userInfoURI: "https://api.login.yahoo.com/openid/v1/userinfo")
        case "facebook.com":
            Defaults(
                issuer: "https://www.facebook.com",
                jwksURI: "https://limited.facebook.com/.well-known/oauth/openid/jwks/",
                userInfoURI: "https://graph.facebook.com/me?fields=id,name,email,picture")
        case "github.com":
            Defaults(userInfoURI: "https://api.github.com/user")
        case "twitter.com":
            Defaults(userInfoURI: "https://api.twitter.com/2/users/me?user.fields=profile_image_url")
        default: nil
        }
    }

    /// The issuer ID tokens must carry: the configured one, else the built-in default.
    public var effectiveIssuer: String? { issuer ?? Self.defaults(for: providerId)?.issuer }
    /// The JWKS to verify ID tokens with.
    public var effectiveJWKSURI: String? { jwksURI ?? Self.defaults(for: providerId)?.jwksURI }
    /// The user-info endpoint for access tokens.
    public var effectiveUserInfoURI: String? { userInfoURI ?? Self.defaults(for: providerId)?.userInfoURI }
    /// The revocation endpoint for a user's tokens.
    public var effectiveRevocationURI: String? { revocationURI ?? Self.defaults(for: providerId)?.revocationURI }
}
