import Foundation
public import PortcullisCore
import PortcullisCrypto
import PortcullisStore

extension AccountService {
    /// `accounts:signUp`: password, anonymous, or (with `idToken`) upgrading an anonymous user,
    /// who belongs to the token's tenant when the body names none.
    public func signUp(
        tenantId named: String?, email: String?, password: String?, profile: Profile, idToken: String?,
        client: IPAddress?
    ) async throws -> SignedIn {
        let endUser = try await endUserTenant(named: named, idToken: idToken)
        let (tenant, settings) = (endUser.scope, endUser.settings)
        let profile = try profile.validated()
        if let idToken {
            return try await upgradeAnonymous(
                idToken: idToken, tenant: tenant, email: email, password: password, profile: profile, settings: settings)
        }
        let method: SignUpMethod = (email == nil && password == nil) ? .anonymous : .password
        try endUser.selfService.authorizeSignUp(method)
        let now = clock.now()
        if let client, !abuse.ipSignUps.consume(ClientAddress.limitKey(client), now: now.seconds) {
            throw AuthError(.tooManyAttemptsTryLater)
        }
        // Read beside the hash rather than after it: in a brand-new tenant this is where its first
        // key is taken and stored, which then costs the sign-up no time of its own.
        async let signer = tokens.signer(tenant: tenant)
        var user = User(
            tenantId: tenant.tenantId, uid: Self.newUID(), displayName: profile.displayName, photoURL: profile.photoURL,
            createdAt: now.date, lastLoginAt: now)
        var hash: String?
        if method == .password {
            guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
            guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
            user.email = try EmailAddress.validate(email)
            try settings.passwordPolicy.check(password)
            hash = try await passwords.hash(password, settings: settings, tenant: tenant)
            user.hasPassword = true
        }
        let pending = tokens.pendingSession(
            for: user, signInProvider: method == .anonymous ? "anonymous" : "password", now: now, signer: try await signer)
        let (created, started) = try await users.create(user, passwordHash: hash, firstSession: pending.start)
        return SignedIn(user: created, tokens: try tokens.issue(pending, for: created, started: started))
    }

    /// `accounts:signUp` with an `idToken`: links an email and password to an anonymous
    /// account, keeping its uid.
    ///
    /// Only an anonymous account may be upgraded this way; any other answers
    /// `EMAIL_EXISTS`, as the emulator does for an account that already has its
    /// email (adding or changing a password goes through `accounts:update`, which needs
    /// a recent sign-in). The upgrade revokes the guest session's other tokens.
    private func upgradeAnonymous(
        idToken: String, tenant: TenantScope, email: String?, password: String?, profile: Profile, settings: TenantSettings
    ) async throws -> SignedIn {
        let (user, claims) = try await authenticate(idToken: idToken, tenant: tenant)
        // Only a guest session upgrades here, and without a recent sign-in.
        guard SessionPolicy.isGuestSession(user, signInProvider: claims.signInProvider) else {
            throw AuthError(.emailExists)
        }
        guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
        guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
        guard settings.allowPasswordSignup else { throw AuthError(.operationNotAllowed) }
        let address = try EmailAddress.validate(email)
        try settings.passwordPolicy.check(password)
        var update = UserUpdate(email: .some(address), passwordHash: try await passwords.hash(password, settings: settings, tenant: tenant))
        if let name = profile.displayName { update.displayName = .some(name) }
        if let photo = profile.photoURL { update.photoURL = .some(photo) }
        let (upgraded, session) = try await applyCredentialChange(update, to: user, requiring: .anonymous)
        return SignedIn(user: upgraded, tokens: session)
    }

    /// `accounts:signInWithPassword`.
    ///
    /// The attempt counts against the account's and the client's limits before the hash
    /// is computed, and is taken back when the password was right.
    public func signIn(tenant: TenantScope, email: String?, password: String?, client: IPAddress?) async throws -> SignedIn {
        let settings = try await EndUserTenant.resolve(tenant, in: tenants).settings
        guard settings.allowPasswordSignup else { throw AuthError(.passwordLoginDisabled) }
        guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
        let address = try EmailAddress.validate(email)
        guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
        let now = clock.now()
        let accountKey = "\(tenant.key):\(address)"
        let clientKey = client.map(ClientAddress.limitKey)
        guard abuse.beginSignIn(account: accountKey, client: clientKey, now: now.seconds) else {
            throw AuthError(.tooManyAttemptsTryLater)
        }
        let found: (user: User, passwordHash: String?)?
        let matches: Bool
        do {
            try passwords.requireRoom(tenant: tenant)
            found = try await users.find(tenant: tenant, email: address)
            matches = try await passwords.verify(password, against: found?.passwordHash, settings: settings, tenant: tenant)
        } catch {
            // Never checked (the pool was full, the database failed): not a failed guess.
            abuse.refundSignIn(account: accountKey, client: clientKey, now: now.seconds)
            throw error
        }
        guard let found, let storedHash = found.passwordHash, matches else {
            throw EmailPrivacyPolicy(settings: settings).wrongCredentials(emailKnown: found != nil)
        }
        let user = found.user
        abuse.refundSignIn(account: accountKey, client: clientKey, now: now.seconds)
        guard !user.disabled else { throw AuthError(.userDisabled) }
        var rehashed: String?
        if passwords.hasher(for: settings).needsRehash(storedHash) {
            // The hash was made with other parameters: upgrade it now that the password is known.
            rehashed = try await passwords.hash(password, settings: settings, tenant: tenant)
        }
        var proof = (email: address, hash: storedHash)
        for _ in 0..<2 {
            if let session = try await tokens.startSession(
                for: user, signInProvider: "password", now: clock.now(), provenPassword: proof,
                upgradedPasswordHash: rehashed)
            {
                return SignedIn(user: user, tokens: session)
            }
            // Between the check and the session the user was disabled or deleted, or its email or
            // hash changed. A new hash may be another sign-in's rehash of the same password: the
            // password is checked once more against what is stored now.
            guard let (current, currentHash) = try await users.find(tenant: tenant, uid: user.uid) else {
                throw EmailPrivacyPolicy(settings: settings).wrongCredentials(emailKnown: false)
            }
            if current.disabled { throw AuthError(.userDisabled) }
            guard current.email == address, let currentHash, currentHash != proof.hash,
                try await passwords.verify(password, against: currentHash, settings: settings, tenant: tenant)
            else { break }
            proof = (address, currentHash)
            rehashed = nil
        }
        throw EmailPrivacyPolicy(settings: settings).wrongCredentials(emailKnown: true)
    }

    /// `accounts:createAuthUri`: the sign-in methods of an email; nothing when enumeration protection is on.
    public func signInMethods(tenant: TenantScope, email: String?) async throws -> [String]? {
        let settings = try await EndUserTenant.resolve(tenant, in: tenants).settings
        guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
        let address = try EmailAddress.validate(email)
        guard EmailPrivacyPolicy(settings: settings).listsSignInMethods else { return nil }
        return try await users.find(tenant: tenant, email: address)?.user.providerIds ?? []
    }
}
