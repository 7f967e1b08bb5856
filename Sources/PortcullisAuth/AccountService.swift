import Foundation
public import PortcullisCore
public import PortcullisCrypto
public import PortcullisStore

/// End-user account operations: the Identity Toolkit semantics, with storage, hashing
/// and tokens delegated. Routes decode, call one method, encode.
///
/// Sign-up and sign-in are in `AccountService+SignIn.swift`, profile and credential
/// changes and self-deletion in `AccountService+Changes.swift`; administrators use
/// ``AdminAccountService``.
public struct AccountService: Sendable {
    let database: Database
    let users: UserRepository
    let links: ProviderLinkRepository
    let tenants: TenantSettingsCache
    let tokens: TokenService
    let passwords: PasswordHashingService
    let abuse: AbuseGuard
    let clock: any WallClock

    /// An account service.
    public init(
        database: Database, users: UserRepository, links: ProviderLinkRepository, tenants: TenantSettingsCache,
        tokens: TokenService, passwords: PasswordHashingService, abuse: AbuseGuard, clock: any WallClock
    ) {
        self.database = database
        self.users = users
        self.links = links
        self.tenants = tenants
        self.tokens = tokens
        self.passwords = passwords
        self.abuse = abuse
        self.clock = clock
    }

    static func newUID() -> String {
        // 28 characters like Firebase's uids, from 168 random bits.
        String(SecretToken.random(byteCount: 21).prefix(28))
    }

    /// A signed-in user with fresh tokens.
    public struct SignedIn: Sendable {
        /// The user after the operation.
        public let user: User
        /// The session's tokens.
        public let tokens: SessionTokens
    }

    /// The profile fields a sign-up or update may carry.
    public struct Profile: Sendable {
        /// New display name.
        public var displayName: String?
        /// New photo URL.
        public var photoURL: String?

        /// A profile.
        public init(displayName: String? = nil, photoURL: String? = nil) {
            self.displayName = displayName
            self.photoURL = photoURL
        }

        /// `INVALID_ARGUMENT` for fields over ``UserProfile``'s limits.
        func validated() throws(AuthError) -> Profile {
            Profile(
                displayName: try displayName.map { name throws(AuthError) in try UserProfile.validate(displayName: name) },
                photoURL: try photoURL.map { url throws(AuthError) in try UserProfile.validate(photoURL: url) })
        }
    }

    // MARK: Signed-in operations

    /// The tenant of an end-user request carrying `idToken`: the one the body names (`named`),
    /// else the token's (`TenantResolution`); `TENANT_ID_MISMATCH` when they differ.
    public func requestTenant(named: String?, idToken: String?) throws(AuthError) -> TenantScope {
        TenantScope(try TenantResolution.resolve(named: named, tokenTenant: tokens.unverifiedTenant(of: idToken)))
    }

    /// Verifies an ID token for an end-user endpoint: signature, tenant, revocation, user state.
    public func authenticate(idToken: String?, tenant: TenantScope) async throws -> (User, IDTokenClaims) {
        guard let idToken, !idToken.isEmpty else { throw AuthError(.missingIdToken) }
        let claims = try await tokens.verifyIDToken(idToken)
        guard claims.tenantId == tenant.tenantId else { throw AuthError(.tenantIdMismatch) }
        // The user row is read anyway, so its own watermark decides (no second lookup through the cache).
        guard let (user, _) = try await users.find(tenant: tenant, uid: claims.subject) else {
            throw AuthError(.userNotFound)
        }
        try SessionPolicy.requireLive(authTime: claims.authTime, validSince: user.validSince, disabled: user.disabled)
        return (user, claims)
    }

    /// The first hop of an end-user request that may carry `idToken`: its tenant
    /// (``requestTenant(named:idToken:)``), checked and with its settings (`EndUserTenant`).
    public func endUserTenant(named: String?, idToken: String?) async throws -> EndUserTenant {
        try await .resolve(requestTenant(named: named, idToken: idToken), in: tenants)
    }

    /// The signed-in caller of an end-user request (`tenantId`: the one the body names, if
    /// any): its tenant takes end-user requests (`PROJECT_DISABLED` otherwise), and the token
    /// verifies and is live (``authenticate(idToken:tenant:)``).
    public func signedInCaller(idToken: String?, tenantId named: String?) async throws -> (User, IDTokenClaims) {
        let tenant = try await endUserTenant(named: named, idToken: idToken)
        return try await authenticate(idToken: idToken, tenant: tenant.scope)
    }

    /// `accounts:lookup` with an ID token; `tenantId` is the one the body names, if any.
    public func lookup(idToken: String?, tenantId named: String?) async throws -> User {
        try await signedInCaller(idToken: idToken, tenantId: named).0
    }
}
