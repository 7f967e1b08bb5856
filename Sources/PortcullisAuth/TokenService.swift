import Foundation
public import PortcullisCore
public import PortcullisCrypto
public import PortcullisJSON
public import PortcullisStore

/// The tokens a sign-in or refresh hands back.
public struct SessionTokens: Sendable {
    /// The signed ID token.
    public let idToken: String
    /// The opaque refresh token (shown once; stored only as a hash).
    public let refreshToken: String
    /// ID-token lifetime in seconds.
    public let expiresIn: Int
}

/// Mints and verifies ID tokens; issues and rotates refresh tokens.
public struct TokenService: Sendable {
    let database: Database
    let keyrings: KeyringService
    let tenants: TenantSettingsCache
    let sessions: RefreshSessionRepository
    let successorKey: RefreshTokenKey
    let verified: VerifiedTokenCache
    /// The project every token's audience names.
    public let projectId: String
    let publicURL: String
    let clock: any WallClock
    /// The sessions it started, by provider and tenant (`portcullis_sign_ins_total`).
    public let signIns = CounterFamily(
        name: "portcullis_sign_ins_total", help: "Sessions started (sign-ups, sign-ins, re-authentications) by provider and tenant",
        labelNames: ["provider", "tenant"])

    /// A token service for one project.
    public init(
        database: Database, keyrings: KeyringService, tenants: TenantSettingsCache, sessions: RefreshSessionRepository,
        successorKey: RefreshTokenKey, verified: VerifiedTokenCache, projectId: String, publicURL: String,
        clock: any WallClock
    ) {
        self.database = database
        self.keyrings = keyrings
        self.tenants = tenants
        self.sessions = sessions
        self.successorKey = successorKey
        self.verified = verified
        self.projectId = projectId
        self.publicURL = publicURL
        self.clock = clock
    }

    /// `<public URL>/<project>` or `<public URL>/<project>/tenants/<tenant>`.
    public func issuer(tenant: TenantScope) -> String {
        tenant.tenantId.map { "\(publicURL)/\(projectId)/tenants/\($0)" } ?? "\(publicURL)/\(projectId)"
    }

    /// What signing a tenant's ID tokens needs: its settings (the lifetime) and its keyring.
    ///
    /// Read before a session is written, so that nothing after the commit can fail on the
    /// database: a session stored but answered 503 would leave the client holding the
    /// previous refresh token, or a new account it cannot sign in to by signing up again.
    public struct Signer: Sendable {
        let settings: TenantSettings
        let keyring: Keyring
    }

    /// The tenant's ``Signer``, from the caches (the database only when they miss).
    public func signer(tenant: TenantScope) async throws -> Signer {
        Signer(settings: try await tenants.settings(tenant: tenant), keyring: try await keyrings.keyring(tenant: tenant))
    }

    /// Signs an ID token for `user`. `iat` is never before `authTime`.
    ///
    /// - Parameters:
    ///   - user: the account the token speaks for (its profile and custom claims as stored).
    ///   - authTime: when the session signed in (`auth_time`), unix seconds.
    ///   - signInProvider: `firebase.sign_in_provider` (`password`, `google.com`, …).
    ///   - now: unix seconds, the token's `iat` unless `authTime` is later.
    ///   - developerClaims: a custom-token session's claims, beside the user's stored
    ///     custom claims (the token's win where both name one).
    public func mintIDToken(
        for user: User, authTime: Int64, signInProvider: String, now: Int64, developerClaims: [String: JSONValue] = [:]
    ) async throws -> (token: String, lifetime: Int) {
        try mintIDToken(
            for: user, authTime: authTime, signInProvider: signInProvider, now: now, developerClaims: developerClaims,
            signer: try await signer(tenant: user.scope))
    }

    private func mintIDToken(
        for user: User, authTime: Int64, signInProvider: String, now: Int64, developerClaims: [String: JSONValue],
        signer: Signer
    ) throws -> (token: String, lifetime: Int) {
        let lifetime = signer.settings.idTokenLifetimeSeconds
        let issuedAt = max(now, authTime)
        let claims = IDTokenClaims(
            issuer: issuer(tenant: user.scope), audience: projectId, subject: user.uid, issuedAt: issuedAt,
            expiresAt: issuedAt + Int64(lifetime), authTime: authTime, email: user.email,
            emailVerified: user.email.map { _ in user.emailVerified }, name: user.displayName, picture: user.photoURL,
            signInProvider: signInProvider, identities: user.identities, tenantId: user.tenantId,
            customClaims: developerClaims.isEmpty
                ? user.customAttributes : user.customAttributes.merging(developerClaims) { _, developer in developer })
        return (try signer.keyring.sign(claims.json, now: issuedAt), lifetime)
    }

    /// A new session after a sign-in: a fresh `auth_time` and a new refresh-token family.
    ///
    /// The sign-in is recorded on the user in the same statement (with `upgradedPasswordHash`,
    /// if any), under the user's row lock. The ID token's `auth_time` is the session's start:
    /// the token is signed before the statement with `now`, which is the start unless another
    /// instance's clock recorded a later sign-in, and signed again in that rare case (signing
    /// first measured a few milliseconds quicker for serial sign-ins, BENCHMARKS.md).
    ///
    /// A session never starts inside the second a revocation covers: when the user's
    /// watermark lies just ahead (`SessionPolicy.sessionStart(requested:validSince:)`), the
    /// session waits for it on the clock, so its tokens outlive the revocation and their
    /// `iat` is never in the future (verifiers such as firebase-admin refuse that).
    ///
    /// - Parameters:
    ///   - user: the account signing in, as read before the sign-in was decided.
    ///   - signInProvider: the session's provider, kept for every ID token it mints.
    ///   - now: the sign-in's time: the session's start and `auth_time` (see above); a
    ///     revoking request passes the watermark it set, and waits for it.
    ///   - provenPassword: for a password sign-in, the email and hash it proved, which must
    ///     still be the user's.
    ///   - upgradedPasswordHash: a rehash of the proven password with the tenant's current
    ///     parameters, stored with the sign-in.
    ///   - validSince: for a credential change, the watermark it set, which must still be the user's.
    ///   - developerClaims: a custom token's `claims`, kept with the session for every ID token it mints.
    /// - Returns: `nil` when the user no longer qualifies: deleted, disabled, (with
    ///   `provenPassword`) its email or password changed since they were checked, or (with
    ///   `validSince`) revoked again since.
    public func startSession(
        for user: User, signInProvider: String, now: Timestamp, provenPassword: (email: String, hash: String)? = nil,
        upgradedPasswordHash: String? = nil, validSince: Timestamp? = nil, developerClaims: [String: JSONValue] = [:]
    ) async throws -> SessionTokens? {
        let now = SessionPolicy.sessionStart(requested: now, validSince: user.validSince)
        try await clock.sleep(until: now)
        var pending = try await pendingSession(
            for: user, signInProvider: signInProvider, now: now, developerClaims: developerClaims)
        pending.start.provenPassword = provenPassword
        pending.start.upgradedPasswordHash = upgradedPasswordHash
        pending.start.validSince = validSince
        let presigned = try mintIDToken(
            for: user, authTime: now.seconds, signInProvider: signInProvider, now: now.seconds, developerClaims: developerClaims,
            signer: pending.signer)
        guard let started = try await sessions.start(pending.start) else { return nil }
        return try issue(pending, for: user, started: started, presigned: presigned)
    }

    /// A session about to start, before anything is stored: its first refresh token and the
    /// row that will record it (``startSession(for:signInProvider:now:provenPassword:upgradedPasswordHash:validSince:developerClaims:)``,
    /// or a new user's creation, which stores both in one transaction).
    public struct PendingSession: Sendable {
        /// The row recording the session (`SessionStart`).
        public var start: SessionStart
        let refresh: RefreshToken
        let developerClaims: [String: JSONValue]
        /// Read now, so that issuing the tokens once the session is stored cannot fail.
        let signer: Signer
    }

    /// The session `user` would start at `now` (nothing is stored or signed yet), with what
    /// signing its tokens will need, read first.
    public func pendingSession(
        for user: User, signInProvider: String, now: Timestamp, developerClaims: [String: JSONValue] = [:]
    ) async throws -> PendingSession {
        pendingSession(
            for: user, signInProvider: signInProvider, now: now, developerClaims: developerClaims,
            signer: try await signer(tenant: user.scope))
    }

    /// ``pendingSession(for:signInProvider:now:developerClaims:)`` with the signer read
    /// already (inside a transaction, which should wait on nothing else).
    public func pendingSession(
        for user: User, signInProvider: String, now: Timestamp, developerClaims: [String: JSONValue] = [:], signer: Signer
    ) -> PendingSession {
        let refresh = RefreshToken.startSession(tenantId: user.tenantId)
        return PendingSession(
            start: SessionStart(
                tenantId: user.tenantId, uid: user.uid, sessionId: refresh.sessionId, tokenHash: refresh.secretHash,
                signInProvider: signInProvider, now: now,
                developerClaims: developerClaims.isEmpty ? nil : JSONValue.object(developerClaims).serialized()),
            refresh: refresh, developerClaims: developerClaims, signer: signer)
    }

    /// A session stored inside a transaction, whose tokens are issued once it commits.
    public struct StartedSession: Sendable {
        let pending: PendingSession
        let started: Timestamp
        /// The account, as the transaction left it.
        public let user: User
    }

    /// Starts `user`'s session inside `transaction`, whose caller holds the user's row lock
    /// and decided the sign-in under it: at `now` or, inside the second a revocation covers,
    /// the end of that second (`SessionPolicy.sessionStart(requested:validSince:)`).
    /// `nil` when the user no longer qualifies (disabled). Nothing is signed until
    /// ``issue(_:)``, after the commit: the row lock is never held for a signature.
    public func startSession(
        for user: User, signInProvider: String, now: Timestamp, signer: Signer, in transaction: Transaction
    ) async throws -> StartedSession? {
        let pending = pendingSession(
            for: user, signInProvider: signInProvider, now: SessionPolicy.sessionStart(requested: now, validSince: user.validSince),
            signer: signer)
        guard let started = try await sessions.start(pending.start, in: transaction) else { return nil }
        return StartedSession(pending: pending, started: started, user: user)
    }

    /// The tokens of a session started inside a transaction that has committed, once its start
    /// is due on the clock (so their `iat` is never in the future; verifiers such as
    /// firebase-admin refuse that).
    public func issue(_ session: StartedSession) async throws -> SessionTokens {
        try await clock.sleep(until: session.started)
        return try issue(session.pending, for: session.user, started: session.started)
    }

    /// The tokens of a session stored as `pending` describes and started at `started` (its
    /// `auth_time`); `presigned` is an ID token already signed for the requested start,
    /// kept when the start is in that second. Touches no database.
    public func issue(
        _ pending: PendingSession, for user: User, started: Timestamp, presigned: (token: String, lifetime: Int)? = nil
    ) throws -> SessionTokens {
        let now = pending.start.now
        var (idToken, lifetime) = presigned ?? ("", 0)
        if presigned == nil || started.seconds != now.seconds {
            (idToken, lifetime) = try mintIDToken(
                for: user, authTime: started.seconds, signInProvider: pending.start.signInProvider, now: now.seconds,
                developerClaims: pending.developerClaims, signer: pending.signer)
        }
        // Every sign-in, sign-up and re-authentication starts a session here, whatever its provider.
        signIns.increment([pending.start.signInProvider, user.scope.key])
        return SessionTokens(idToken: idToken, refreshToken: pending.refresh.string, expiresIn: lifetime)
    }

    /// Exchanges a refresh token for new tokens, rotating it (DESIGN.md §3).
    public func refresh(_ presented: String) async throws -> (tokens: SessionTokens, user: User) {
        guard let token = RefreshToken(parsing: presented) else { throw AuthError(.invalidRefreshToken) }
        let now = clock.now().seconds
        // Everything minting needs is read before the rotation commits (see ``Signer``).
        let signer: Signer
        do {
            signer = try await self.signer(tenant: TenantScope(token.tenantId))
        } catch let error as AuthError where error.code == .tenantNotFound {
            throw AuthError(.invalidRefreshToken)
        }
        _ = try EndUserTenant(TenantScope(token.tenantId), settings: signer.settings)
        let successor = token.successor(using: successorKey)
        let rotation = RefreshSessionRepository.Rotation(
            tenant: TenantScope(token.tenantId), sessionId: token.sessionId, presentedHash: token.secretHash,
            successorHash: successor.secretHash, now: now)
        let rotated: (session: RefreshSession, user: User)
        if let current = try await sessions.rotateCurrent(rotation) {
            rotated = current
        } else {
            rotated = try await rotateByPolicy(rotation, graceSeconds: signer.settings.refreshTokenReuseGraceSeconds)
        }
        let (session, user) = rotated
        let (idToken, lifetime) = try mintIDToken(
            for: user, authTime: session.authTime, signInProvider: session.signInProvider, now: now,
            developerClaims: session.developerClaims, signer: signer)
        return (SessionTokens(idToken: idToken, refreshToken: successor.string, expiresIn: lifetime), user)
    }

    /// A refresh off the common path (a replay, a revoked session or user, a race), decided by
    /// `RefreshTokenPolicy` on the session as stored, in one transaction. A refusal is
    /// returned from the transaction, not thrown, so the revocation a reuse writes commits
    /// before the refusal is answered. A replay within the grace window answers with the
    /// current token, which is the successor's by construction. The grace window discounts
    /// the periods this instance found PostgreSQL unreachable (``Database/outages``).
    func rotateByPolicy(
        _ rotation: RefreshSessionRepository.Rotation, graceSeconds: Int
    ) async throws -> (session: RefreshSession, user: User) {
        let outcome: Result<(session: RefreshSession, user: User), AuthError> = try await database.withTransaction {
            [sessions, database] transaction in
            for _ in 0..<3 {
                if let rotated = try await sessions.rotateCurrent(rotation, in: transaction) { return .success(rotated) }
                guard let stored = try await sessions.presented(rotation, in: transaction) else {
                    return .failure(AuthError(.invalidRefreshToken))
                }
                switch RefreshTokenPolicy.decide(
                    stored.state, validSince: stored.user.validSince, now: rotation.now, graceSeconds: graceSeconds,
                    outages: database.outages)
                {
                case .invalid:
                    return .failure(AuthError(.invalidRefreshToken))
                case .expired:
                    return .failure(AuthError(.tokenExpired))
                case .reuseDetected:
                    try await sessions.revoke(rotation, in: transaction)
                    return .failure(AuthError(.invalidRefreshToken))
                case .replayWithinGrace:
                    guard !stored.user.disabled else { return .failure(AuthError(.userDisabled)) }
                    guard stored.successorIsCurrent else { return .failure(AuthError(.invalidRefreshToken)) }
                    return .success((stored.session, stored.user))
                case .rotate:
                    guard !stored.user.disabled else { return .failure(AuthError(.userDisabled)) }
                // The session changed between the two statements: try again.
                }
            }
            return .failure(AuthError(.invalidRefreshToken))
        }
        return try outcome.get()
    }

    /// The tenant an ID token names, before anything about it is checked: `.some(nil)` for a
    /// project user's token, `nil` when there is no token or it cannot be read. Only for
    /// choosing which tenant judges a request (`TenantResolution`); ``verifyIDToken(_:)`` then
    /// verifies it with that tenant's keys.
    public func unverifiedTenant(of idToken: String?) -> String?? {
        guard let idToken, let jws = CompactJWS(idToken), case .object(let firebase)? = jws.claims["firebase"]
        else { return nil }
        switch firebase["tenant"] {
        case nil: return .some(nil)
        case .string(let tenant)?: return .some(tenant)
        default: return nil
        }
    }

    /// Verifies an ID token's signature (with its tenant's keys), issuer, audience and expiry.
    ///
    /// `INVALID_ID_TOKEN` for anything forged or malformed, `TOKEN_EXPIRED` once `exp` passed.
    /// A token this instance verified before is taken from ``VerifiedTokenCache``; its expiry
    /// is checked on every call all the same.
    public func verifyIDToken(_ token: String) async throws -> IDTokenClaims {
        let now = clock.now().seconds
        let fingerprint = TokenFingerprint(token)
        let claims: IDTokenClaims
        if let cached = verified.claims(of: fingerprint) {
            claims = cached
        } else {
            // Taken before the keys are read: a key change during verification keeps the result out.
            let generation = verified.generation
            claims = try await verifySignatureAndIssuer(token, now: now)
            verified.remember(fingerprint, claims, ifGeneration: generation)
        }
        guard claims.expiresAt > now else { throw AuthError(.tokenExpired) }
        return claims
    }

    private func verifySignatureAndIssuer(_ token: String, now: Int64) async throws -> IDTokenClaims {
        // Parsed once; the payload's tenant (unverified yet) picks the keyring that must verify it,
        // so a token can only ever verify with its own tenant's keys.
        guard let jws = CompactJWS(token), case .object(let firebase)? = jws.claims["firebase"] else {
            throw AuthError(.invalidIdToken)
        }
        let tenant: TenantScope
        switch firebase["tenant"] {
        case nil: tenant = .project
        case .string(let id)? where TenantID.isValid(id): tenant = .tenant(id)
        default: throw AuthError(.invalidIdToken)
        }
        let keyring: Keyring
        do {
            keyring = try await keyrings.keyring(tenant: tenant)
        } catch let error as AuthError where error.code == .tenantNotFound {
            throw AuthError(.invalidIdToken)
        }
        do {
            try keyring.verify(jws)
        } catch {
            throw AuthError(.invalidIdToken)
        }
        guard let claims = IDTokenClaims(json: .object(jws.claims)), claims.tenantId == tenant.tenantId,
            claims.issuer == issuer(tenant: tenant), claims.audience == projectId,
            claims.issuedAt <= now + 60
        else { throw AuthError(.invalidIdToken) }
        return claims
    }
}
