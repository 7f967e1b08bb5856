import Foundation
public import PortcullisCore
import PortcullisCrypto
public import PortcullisStore

/// `accounts:signInWithIdp`: sign-in, sign-up and linking with a federated identity
/// (DESIGN.md §1). The decisions are Core's (`EmailTrust`, `AccountLinking`,
/// `SelfServicePolicy`); this service verifies the credential and applies them, each
/// change in one transaction.
public struct FederatedSignInService: Sendable {
    let database: Database
    let tenants: TenantSettingsCache
    let providers: IdentityProviderCache
    let verifier: IdPTokenVerifier
    let users: UserRepository
    let links: ProviderLinkRepository
    let accounts: AccountService
    let tokens: TokenService
    let abuse: AbuseGuard
    let clock: any WallClock

    /// A service over its collaborators.
    public init(
        database: Database, tenants: TenantSettingsCache, providers: IdentityProviderCache, verifier: IdPTokenVerifier,
        users: UserRepository, links: ProviderLinkRepository, accounts: AccountService, tokens: TokenService,
        abuse: AbuseGuard, clock: any WallClock
    ) {
        self.database = database
        self.tenants = tenants
        self.providers = providers
        self.verifier = verifier
        self.users = users
        self.links = links
        self.accounts = accounts
        self.tokens = tokens
        self.abuse = abuse
        self.clock = clock
    }

    /// What a federated sign-in did.
    public struct Outcome: Sendable {
        /// What the credential proved.
        public let identity: FederatedIdentity
        /// Whether the provider vouches for the identity's email (`EmailTrust`).
        public let provesEmail: Bool
        /// The account signed in to (for `needConfirmation`, the account that has the email).
        public let user: User
        /// Whether this sign-in created the account.
        public let isNewUser: Bool
        /// The session's tokens; `nil` with `needConfirmation`.
        public let tokens: SessionTokens?

        /// The account exists under another provider and may not be merged automatically:
        /// the client must sign in with an existing method and link explicitly.
        public var needConfirmation: Bool { tokens == nil }
    }

    /// Signs in with `credential`, or (with `idToken`) links it to that token's account. A
    /// sign-in that creates an account counts against `client`'s sign-up limit, as a
    /// password sign-up does.
    public func signIn(
        tenantId named: String?, credential: FederatedCredential, idToken: String?, client: IPAddress?
    ) async throws -> Outcome {
        // Linking belongs to the token's tenant when the body names none.
        let endUser = try await accounts.endUserTenant(named: named, idToken: idToken)
        let (tenant, settings) = (endUser.scope, endUser.settings)
        guard IdentityProvider.isFederated(credential.providerId) else {
            throw AuthError(.invalidProviderId)
        }
        guard let provider = try await providers.provider(credential.providerId, tenant: tenant), provider.enabled else {
            throw AuthError(.operationNotAllowed, detail: "\(credential.providerId) is not enabled for this tenant")
        }
        let identity = try Self.normalized(try await verifier.verify(credential, with: provider))
        let provesEmail = EmailTrust.provesEmail(identity, tenantDomains: settings.trustedEmailDomains)
        let link = ProviderLink(
            providerId: identity.providerId, federatedId: identity.federatedId, email: identity.email,
            displayName: identity.displayName, photoURL: identity.photoURL)
        if let idToken {
            return try await linkExplicitly(
                link, identity: identity, provesEmail: provesEmail, idToken: idToken, settings: settings, tenant: tenant)
        }
        // A concurrent first sign-in of the same identity (or a sign-up taking the email) can
        // win the race to create the account: the next round finds what it made.
        for _ in 0..<3 {
            if let outcome = try await signInExisting(link, identity: identity, provesEmail: provesEmail, tenant: tenant) {
                return outcome
            }
            if let email = identity.email {
                do {
                    if let outcome = try await signInByEmail(
                        link, email: email, identity: identity, provesEmail: provesEmail, settings: settings, tenant: tenant)
                    {
                        return outcome
                    }
                } catch Conflict.identityLinked {
                    continue
                }
            }
            try endUser.selfService.authorizeSignUp(.federated)
            let now = clock.now()
            if let client, !abuse.ipSignUps.consume(ClientAddress.limitKey(client), now: now.seconds) {
                throw AuthError(.tooManyAttemptsTryLater)
            }
            let user = User(
                tenantId: tenant.tenantId, uid: AccountService.newUID(), email: identity.email, emailVerified: provesEmail,
                displayName: identity.displayName, photoURL: identity.photoURL, providers: [link], createdAt: now.date,
                lastLoginAt: now)
            let pending = try await tokens.pendingSession(for: user, signInProvider: link.providerId, now: now)
            let created: (user: User, started: Timestamp)
            do {
                created = try await users.create(user, passwordHash: nil, firstSession: pending.start)
            } catch let conflict as Conflict where conflict == .identityLinked || conflict == .emailTaken {
                continue
            }
            let session = try tokens.issue(pending, for: created.user, started: created.started)
            return Outcome(identity: identity, provesEmail: provesEmail, user: created.user, isNewUser: true, tokens: session)
        }
        throw AuthError(.unavailable)
    }

    /// What the provider said, kept only where it fits the account model: an email that is
    /// not an address is dropped (the identity signs in without one), a name or picture
    /// over the profile limits too. A provider's `sub` is an identifier like a uid (1–128
    /// characters) or the credential is refused.
    static func normalized(_ identity: FederatedIdentity) throws -> FederatedIdentity {
        guard (1...128).contains(identity.federatedId.count), !identity.federatedId.contains("\0") else {
            throw AuthError(.invalidIdpResponse, detail: "the provider's user id is not 1 to 128 characters")
        }
        var identity = identity
        identity.email = identity.email.flatMap { try? EmailAddress.validate($0) }
        identity.displayName = identity.displayName.flatMap { try? UserProfile.validate(displayName: $0) }
        identity.photoURL = identity.photoURL.flatMap { try? UserProfile.validate(photoURL: $0) }
        return identity
    }

    /// The identity is linked already: sign in to its account.
    private func signInExisting(
        _ link: ProviderLink, identity: FederatedIdentity, provesEmail: Bool, tenant: TenantScope
    ) async throws -> Outcome? {
        guard let (user, stored) = try await links.account(tenant: tenant, providerId: link.providerId, federatedId: link.federatedId)
        else { return nil }
        guard !user.disabled else { throw AuthError(.userDisabled) }
        if stored != link { try await links.refresh(link, tenant: tenant) }
        guard let session = try await tokens.startSession(for: user, signInProvider: link.providerId, now: clock.now()) else {
            throw try await AccountService.missing(user, in: users)
        }
        return Outcome(identity: identity, provesEmail: provesEmail, user: user, isNewUser: false, tokens: session)
    }

    /// The identity is new but its email has an account: link, take over, or ask (`AccountLinking`).
    ///
    /// One transaction: the account is locked, `AccountLinking` decides on it as locked,
    /// `UserUpdatePolicy` says what the decision writes, and the owner's session starts, so a
    /// takeover and its revocation land together with the session that survives it.
    /// `Conflict.identityLinked` when the identity got linked elsewhere meanwhile.
    private func signInByEmail(
        _ link: ProviderLink, email: String, identity: FederatedIdentity, provesEmail: Bool, settings: TenantSettings,
        tenant: TenantScope
    ) async throws -> Outcome? {
        let signer = try await tokens.signer(tenant: tenant)
        let match: EmailMatch = try await database.withTransaction { [users, links, tokens, clock] transaction in
            guard let user = try await users.lock(tenant: tenant, email: email, in: transaction) else { return .noAccount }
            guard !user.disabled else { throw AuthError(.userDisabled) }
            // Read once the lock is held: the revocation and the session date from then.
            let now = clock.now()
            let decision = AccountLinking.decide(
                existing: AccountLinking.existingProviders(of: user, tenantDomains: settings.trustedEmailDomains),
                emailVerified: user.emailVerified, incomingProvesEmail: provesEmail)
            if case .needConfirmation = decision { return .needConfirmation(user) }
            if case .replace(let unlinking, _) = decision {
                try await links.unlink(Set(unlinking), from: user.uid, tenant: tenant, in: transaction)
            }
            try await links.link(link, to: user.uid, tenant: tenant, in: transaction)
            let update = UserUpdatePolicy.linking(
                decision, provesEmail: provesEmail, displayName: identity.displayName, photoURL: identity.photoURL, now: now)
            // Each statement sees the ones before it: the links read back are the new ones.
            guard let linked = try await users.update(tenant: tenant, uid: user.uid, update, requiring: .enabled, in: transaction)
            else { throw AuthError(.userDisabled) }
            // After a takeover the owner's session starts at the revocation's watermark, however
            // far ahead another instance's clock put it: it must outlive the sessions it ended.
            let start = update.revocation == nil ? now : linked.validSince
            guard
                let session = try await tokens.startSession(
                    for: linked, signInProvider: link.providerId, now: start, signer: signer, in: transaction)
            else { throw AuthError(.userDisabled) }
            return .linked(session)
        }
        switch match {
        case .noAccount:
            return nil
        case .needConfirmation(let user):
            return Outcome(identity: identity, provesEmail: provesEmail, user: user, isNewUser: false, tokens: nil)
        case .linked(let session):
            return Outcome(
                identity: identity, provesEmail: provesEmail, user: session.user, isNewUser: false,
                tokens: try await tokens.issue(session))
        }
    }

    /// What a sign-in with a new identity did to the account that has its email.
    private enum EmailMatch: Sendable {
        /// No account has the email (any more).
        case noAccount
        /// The identity was linked (the account maybe taken over) and the session started.
        case linked(TokenService.StartedSession)
        /// The account and the identity may not be merged automatically.
        case needConfirmation(User)
    }

    /// `signInWithIdp` with an `idToken`: links the identity to that token's account.
    ///
    /// Adding a way in needs a recent sign-in (`CREDENTIAL_TOO_OLD_LOGIN_AGAIN`), except
    /// for a guest upgrading; `FEDERATED_USER_ID_ALREADY_LINKED` when another account has
    /// the identity, `EMAIL_EXISTS` when another account has its email. An account without
    /// an email takes the identity's, verified when the provider proves it. The link and the
    /// session are one transaction under the account's row lock.
    private func linkExplicitly(
        _ link: ProviderLink, identity: FederatedIdentity, provesEmail: Bool, idToken: String, settings: TenantSettings,
        tenant: TenantScope
    ) async throws -> Outcome {
        let (user, claims) = try await accounts.authenticate(idToken: idToken, tenant: tenant)
        try SessionPolicy.requireRecentSignIn(
            authTime: claims.authTime, now: clock.now().seconds, windowSeconds: settings.recentLoginWindowSeconds,
            anonymous: SessionPolicy.isGuestSession(user, signInProvider: claims.signInProvider))
        if let (owner, _) = try await links.account(tenant: tenant, providerId: link.providerId, federatedId: link.federatedId),
            owner.uid != user.uid
        {
            throw AuthError(.federatedUserIdAlreadyLinked)
        }
        if let email = identity.email, let other = try await users.find(tenant: tenant, email: email)?.user,
            other.uid != user.uid
        {
            throw AuthError(.emailExists)
        }
        let signer = try await tokens.signer(tenant: tenant)
        let session: TokenService.StartedSession? = try await database.withTransaction { [users, links, tokens, clock] transaction in
            guard var linked = try await users.lock(tenant: tenant, uid: user.uid, in: transaction) else { return nil }
            // The token must still be live for the account as locked: a revocation that
            // committed after it was checked (a password change) ends its right to add a way in.
            try SessionPolicy.requireLive(authTime: claims.authTime, validSince: linked.validSince, disabled: linked.disabled)
            let now = clock.now()
            try await links.link(link, to: linked.uid, tenant: tenant, in: transaction)
            if linked.email == nil, let email = identity.email {
                let update = UserUpdate(email: .some(email), emailVerified: provesEmail)
                guard
                    let updated = try await users.update(tenant: tenant, uid: linked.uid, update, requiring: .enabled, in: transaction)
                else { return nil }
                linked = updated
            }
            if !linked.providers.contains(where: { $0.providerId == link.providerId && $0.federatedId == link.federatedId }) {
                linked.providers.append(link)
            }
            return try await tokens.startSession(
                for: linked, signInProvider: link.providerId, now: now, signer: signer, in: transaction)
        }
        guard let session else { throw try await AccountService.missing(user, in: users) }
        return Outcome(
            identity: identity, provesEmail: provesEmail, user: session.user, isNewUser: false,
            tokens: try await tokens.issue(session))
    }
}
