import Foundation
public import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
public import PortcullisStore

/// `accounts:signInWithCustomToken`: a customer's backend vouches for a uid with a JWT
/// signed by one of its service accounts (DESIGN.md §3).
///
/// The verifying key is looked up by the header's `kid` when it has one (an unknown `kid`
/// is refused, never retried by email), else by the `iss` email (several SDKs send no
/// `kid`). Keys are searched in the request's tenant, then the tenant the token names,
/// then the project: a token another tenant's service account signed is then recognised
/// and refused as `TENANT_ID_MISMATCH` rather than as an unknown key. What the verified
/// claims must say is `CustomTokenPolicy`.
///
/// The sign-in is admin-sanctioned: it creates the user when the uid is new (with an empty
/// profile) even when the tenant disables self-service sign-up. The token's `claims` go
/// into every ID token of the session it starts, refreshes included; where they and the
/// user's stored custom claims name the same claim, the token's win (it is the newer word
/// of the same backend).
public struct CustomTokenService: Sendable {
    let users: UserRepository
    let tenants: TenantSettingsCache
    let tokens: TokenService
    let keys: ServiceAccountKeyCache
    let clock: any WallClock

    /// A custom-token service.
    public init(
        users: UserRepository, tenants: TenantSettingsCache, tokens: TokenService, keys: ServiceAccountKeyCache,
        clock: any WallClock
    ) {
        self.users = users
        self.tenants = tenants
        self.tokens = tokens
        self.keys = keys
        self.clock = clock
    }

    /// A custom-token sign-in's outcome.
    public struct SignedIn: Sendable {
        /// The user signed in.
        public let user: User
        /// The session's tokens.
        public let tokens: SessionTokens
        /// Whether this sign-in created the user.
        public let isNewUser: Bool
    }

    /// The signer names `custom`, as Firebase's ID tokens do.
    public static let signInProvider = "custom"

    /// Verifies `token` and signs its uid in.
    ///
    /// - Throws: `MISSING_CUSTOM_TOKEN`, `INVALID_CUSTOM_TOKEN` (malformed, not RS256, unknown
    ///   key, bad signature, and `CustomTokenPolicy`'s rules), `CREDENTIAL_MISMATCH`,
    ///   `TENANT_ID_MISMATCH`, the custom-claim codes, `USER_DISABLED`, and the tenant's
    ///   `TENANT_NOT_FOUND` / `PROJECT_DISABLED`.
    public func signIn(token: String?, tenant: TenantScope) async throws -> SignedIn {
        _ = try await EndUserTenant.resolve(tenant, in: tenants)
        guard let token, !token.isEmpty else { throw AuthError(.missingCustomToken) }
        guard let jws = CompactJWS(token) else {
            throw AuthError(.invalidCustomToken, detail: "Invalid assertion format. 3 dot separated segments required.")
        }
        // Only RS256: `none`, HMAC (keyed with a public key an attacker knows) and the rest never verify.
        guard jws.algorithm == "RS256" else { throw AuthError(.invalidCustomToken, detail: "The custom token must be signed with RS256") }
        let candidates = try await candidateKeys(for: jws, request: tenant)
        guard let signer = candidates.first(where: { jws.isSigned(by: $0.key) }) else {
            throw AuthError(.invalidCustomToken, detail: "The custom token's signature does not verify")
        }
        let now = clock.now()
        let accepted = try CustomTokenPolicy.accept(
            jws.claims, signer: .init(email: signer.account.clientEmail, tenantId: signer.account.tenantId),
            requestTenantId: tenant.tenantId, now: now.seconds)
        return try await startSession(uid: accepted.uid, tenant: tenant, developerClaims: accepted.developerClaims, now: now)
    }

    /// The keys that may have signed `jws`: the one its `kid` names, or those of its `iss`.
    private func candidateKeys(for jws: CompactJWS, request: TenantScope) async throws -> [ServiceAccountKeyCache.Entry] {
        let scopes = try await scopes(request: request, claimed: jws.claims["tenant_id"])
        if let kid = jws.kid {
            for scope in scopes {
                if let entry = try await keys.key(tenant: scope, kid: kid) { return [entry] }
            }
            throw AuthError(.invalidCustomToken, detail: "No service account has the key the custom token names (kid)")
        }
        guard case .string(let issuer)? = jws.claims["iss"], !issuer.isEmpty else {
            throw AuthError(.invalidCustomToken, detail: "A custom token without kid must name its signer (iss)")
        }
        var found: [ServiceAccountKeyCache.Entry] = []
        for scope in scopes { found += try await keys.keys(tenant: scope, email: issuer) }
        guard !found.isEmpty else {
            throw AuthError(.invalidCustomToken, detail: "No service account has the signer the custom token names (iss)")
        }
        return found
    }

    /// Where keys are searched: the request's tenant, the token's own tenant if it names
    /// another existing one (unverified yet: it only picks where to look, the signature and
    /// the policy still decide), then the project.
    private func scopes(request: TenantScope, claimed: JSONValue?) async throws -> [TenantScope] {
        var scopes = [request]
        if case .string(let id)? = claimed, .tenant(id) != request, TenantID.isValid(id) {
            do {
                _ = try await tenants.settings(tenant: .tenant(id))
                scopes.append(.tenant(id))
            } catch let error as AuthError where error.code == .tenantNotFound {
                // A made-up tenant: nothing to look up (and no database round trip for it).
            }
        }
        if request != .project { scopes.append(.project) }
        return scopes
    }

    /// Finds or creates the user, then starts a `custom` session carrying `developerClaims`.
    private func startSession(
        uid: String, tenant: TenantScope, developerClaims: [String: JSONValue], now: Timestamp
    ) async throws -> SignedIn {
        var user: User
        if let (existing, _) = try await users.find(tenant: tenant, uid: uid) {
            user = existing
        } else {
            // A new user and its first session, in one transaction.
            let created = User(tenantId: tenant.tenantId, uid: uid, createdAt: now.date, lastLoginAt: now)
            let pending = try await tokens.pendingSession(
                for: created, signInProvider: Self.signInProvider, now: now, developerClaims: developerClaims)
            do {
                let (stored, started) = try await users.create(created, passwordHash: nil, firstSession: pending.start)
                return SignedIn(
                    user: stored, tokens: try tokens.issue(pending, for: stored, started: started), isNewUser: true)
            } catch Conflict.uidTaken {
                // A concurrent first sign-in of the same uid created it: this one signs in to it.
                guard let (existing, _) = try await users.find(tenant: tenant, uid: uid) else { throw Conflict.uidTaken }
                user = existing
            }
        }
        guard !user.disabled else { throw AuthError(.userDisabled) }
        guard
            let session = try await tokens.startSession(
                for: user, signInProvider: Self.signInProvider, now: now, developerClaims: developerClaims)
        else {
            // Disabled or deleted between the read and the session.
            let current = try await users.find(tenant: tenant, uid: uid)
            throw AuthError(current?.user.disabled == true ? .userDisabled : .userNotFound)
        }
        return SignedIn(user: user, tokens: session, isNewUser: false)
    }
}
