import Foundation
public import PortcullisCore
public import PortcullisCrypto
public import PortcullisStore

/// End-user and admin account operations: the Identity Toolkit semantics, with
/// storage, hashing and tokens delegated. Routes decode, call one method, encode.
public struct AccountService: Sendable {
    let users: UserRepository
    let tenants: TenantSettingsCache
    let tokens: TokenService
    let revocation: RevocationCache
    let passwords: PasswordHashingService
    let abuse: AbuseGuard
    let clock: any WallClock

    /// An account service.
    public init(
        users: UserRepository, tenants: TenantSettingsCache, tokens: TokenService, revocation: RevocationCache,
        passwords: PasswordHashingService, abuse: AbuseGuard, clock: any WallClock = SystemClock()
    ) {
        self.users = users
        self.tenants = tenants
        self.tokens = tokens
        self.revocation = revocation
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

    // MARK: Sign-up and sign-in

    /// `accounts:signUp`: password, anonymous, or (with `idToken`) upgrading an anonymous user.
    public func signUp(
        tenantId: String?, email: String?, password: String?, profile: Profile, idToken: String?,
        client: IPAddress?
    ) async throws -> SignedIn {
        let settings = try await tenants.settings(tenantId: tenantId)
        let profile = try profile.validated()
        if let idToken {
            return try await upgradeAnonymous(
                idToken: idToken, tenantId: tenantId, email: email, password: password, profile: profile, settings: settings)
        }
        let method: SignUpMethod = (email == nil && password == nil) ? .anonymous : .password
        try SelfServicePolicy(settings: settings).authorizeSignUp(method)
        let now = clock.now()
        if let client, !abuse.ipSignUps.consume(ClientAddress.limitKey(client), now: now.seconds) {
            throw AuthError(.tooManyAttemptsTryLater)
        }
        var user = User(
            tenantId: tenantId, uid: Self.newUID(), displayName: profile.displayName, photoURL: profile.photoURL,
            createdAt: now.date, lastLoginAt: now)
        var hash: String?
        if method == .password {
            guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
            guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
            user.email = try EmailAddress.validate(email)
            try settings.passwordPolicy.check(password)
            hash = try await passwords.hash(password, settings: settings)
            user.hasPassword = true
        }
        let created = try await users.create(user, passwordHash: hash)
        guard
            let session = try await tokens.startSession(
                for: created, signInProvider: method == .anonymous ? "anonymous" : "password", now: now)
        else { throw AuthError(.userNotFound) }
        return SignedIn(user: created, tokens: session)
    }

    /// `accounts:signUp` with an `idToken`: links an email and password to an anonymous
    /// account, keeping its uid.
    ///
    /// Only an anonymous account may be upgraded this way; any other answers
    /// `EMAIL_EXISTS`, as the emulator does for an account that already has its
    /// email (adding or changing a password goes through `accounts:update`, which needs
    /// a recent sign-in). The upgrade revokes the guest session's other tokens.
    private func upgradeAnonymous(
        idToken: String, tenantId: String?, email: String?, password: String?, profile: Profile, settings: TenantSettings
    ) async throws -> SignedIn {
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        let (user, claims) = try await authenticate(idToken: idToken, tenantId: tenantId)
        guard user.isAnonymous else { throw AuthError(.emailExists) }
        guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
        guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
        guard settings.allowPasswordSignup else { throw AuthError(.operationNotAllowed) }
        try SessionPolicy.requireRecentSignIn(
            authTime: claims.authTime, now: clock.now().seconds, windowSeconds: settings.recentLoginWindowSeconds, anonymous: true)
        let address = try EmailAddress.validate(email)
        try settings.passwordPolicy.check(password)
        var update = UserUpdate(email: .some(address), passwordHash: try await passwords.hash(password, settings: settings))
        if let name = profile.displayName { update.displayName = .some(name) }
        if let photo = profile.photoURL { update.photoURL = .some(photo) }
        let (upgraded, session) = try await applyCredentialChange(update, to: user, requiring: .anonymous)
        return SignedIn(user: upgraded, tokens: session)
    }

    /// `accounts:signInWithPassword`.
    ///
    /// The attempt counts against the account's and the client's limits before the hash
    /// is computed, and is taken back when the password was right.
    public func signIn(tenantId: String?, email: String?, password: String?, client: IPAddress?) async throws -> SignedIn {
        let settings = try await tenants.settings(tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        guard settings.allowPasswordSignup else { throw AuthError(.passwordLoginDisabled) }
        guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
        let address = try EmailAddress.validate(email)
        guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
        let now = clock.now()
        let accountKey = "\(tenantId ?? ""):\(address)"
        let clientKey = client.map(ClientAddress.limitKey)
        guard abuse.beginSignIn(account: accountKey, client: clientKey, now: now.seconds) else {
            throw AuthError(.tooManyAttemptsTryLater)
        }
        let found: (user: User, passwordHash: String?)?
        let matches: Bool
        do {
            found = try await users.find(tenantId: tenantId, email: address)
            matches = try await passwords.verify(password, against: found?.passwordHash, settings: settings)
        } catch {
            // Never checked (the pool was full, the database failed): not a failed guess.
            abuse.refundSignIn(account: accountKey, client: clientKey, now: now.seconds)
            throw error
        }
        guard let found, let storedHash = found.passwordHash, matches else {
            throw SignInPolicy.wrongCredentials(emailKnown: found != nil, privacy: settings.enableImprovedEmailPrivacy)
        }
        let user = found.user
        abuse.refundSignIn(account: accountKey, client: clientKey, now: now.seconds)
        guard !user.disabled else { throw AuthError(.userDisabled) }
        var rehashed: String?
        if passwords.hasher(for: settings).needsRehash(storedHash) {
            // The hash was made with other parameters: upgrade it now that the password is known.
            rehashed = try await passwords.hash(password, settings: settings)
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
            guard let (current, currentHash) = try await users.find(tenantId: tenantId, uid: user.uid) else {
                throw SignInPolicy.wrongCredentials(emailKnown: false, privacy: settings.enableImprovedEmailPrivacy)
            }
            if current.disabled { throw AuthError(.userDisabled) }
            guard current.email == address, let currentHash, currentHash != proof.hash,
                try await passwords.verify(password, against: currentHash, settings: settings)
            else { break }
            proof = (address, currentHash)
            rehashed = nil
        }
        throw SignInPolicy.wrongCredentials(emailKnown: true, privacy: settings.enableImprovedEmailPrivacy)
    }

    /// `accounts:createAuthUri`: the sign-in methods of an email; nothing when enumeration protection is on.
    public func signInMethods(tenantId: String?, email: String?) async throws -> [String]? {
        let settings = try await tenants.settings(tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
        let address = try EmailAddress.validate(email)
        guard !settings.enableImprovedEmailPrivacy else { return nil }
        return try await users.find(tenantId: tenantId, email: address)?.user.providerIds ?? []
    }

    // MARK: Signed-in operations

    /// Verifies an ID token for an end-user endpoint: signature, tenant, revocation, user state.
    public func authenticate(idToken: String?, tenantId: String?) async throws -> (User, IDTokenClaims) {
        guard let idToken, !idToken.isEmpty else { throw AuthError(.missingIdToken) }
        let claims = try await tokens.verifyIDToken(idToken)
        guard claims.tenantId == tenantId else { throw AuthError(.tenantIdMismatch) }
        // The user row is read anyway, so its own watermark decides (no second lookup through the cache).
        guard let (user, _) = try await users.find(tenantId: tenantId, uid: claims.subject) else {
            throw AuthError(.userNotFound)
        }
        try SessionPolicy.requireLive(authTime: claims.authTime, validSince: user.validSince, disabled: user.disabled)
        return (user, claims)
    }

    /// `accounts:lookup` with an ID token.
    public func lookup(idToken: String?, tenantId: String?) async throws -> User {
        let settings = try await tenants.settings(tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        return try await authenticate(idToken: idToken, tenantId: tenantId).0
    }

    /// What `accounts:update` may change.
    public struct Changes: Sendable {
        /// New email (needs a recent sign-in; revokes other sessions).
        public var email: String?
        /// New password (needs a recent sign-in; revokes other sessions).
        public var password: String?
        /// New display name and photo URL.
        public var profile: Profile
        /// `DISPLAY_NAME`, `PHOTO_URL` to clear.
        public var deleteAttributes: Set<String> = []

        /// Creates changes.
        public init(email: String? = nil, password: String? = nil, profile: Profile = Profile(), deleteAttributes: Set<String> = []) {
            self.email = email
            self.password = password
            self.profile = profile
            self.deleteAttributes = deleteAttributes
        }
    }

    /// `accounts:update` with an ID token. Password and email changes return new tokens.
    ///
    /// Only the fields the request names are written, in one statement: a concurrent
    /// change to another field (an admin disabling the user, another revocation) stands.
    public func update(
        idToken: String?, tenantId: String?, changes: Changes
    ) async throws -> (user: User, tokens: SessionTokens?) {
        let settings = try await tenants.settings(tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        let (user, claims) = try await authenticate(idToken: idToken, tenantId: tenantId)
        let profile = try changes.profile.validated()
        var update = UserUpdate()
        if let name = profile.displayName { update.displayName = .some(name) }
        if let photo = profile.photoURL { update.photoURL = .some(photo) }
        if changes.deleteAttributes.contains("DISPLAY_NAME") { update.displayName = .some(nil) }
        if changes.deleteAttributes.contains("PHOTO_URL") { update.photoURL = .some(nil) }
        guard changes.email != nil || changes.password != nil else {
            guard let updated = try await users.update(tenantId: tenantId, uid: user.uid, update, requiring: .enabled) else {
                throw try await Self.missing(user, in: users)
            }
            return (updated, nil)
        }
        // The presented token's own auth_time is what the recent-login rule judges.
        try SessionPolicy.requireRecentSignIn(
            authTime: claims.authTime, now: clock.now().seconds, windowSeconds: settings.recentLoginWindowSeconds,
            anonymous: user.isAnonymous)
        if let email = changes.email { update.email = .some(try EmailAddress.validate(email)) }
        if let password = changes.password {
            try settings.passwordPolicy.check(password)
            update.passwordHash = try await passwords.hash(password, settings: settings)
        }
        let (updated, session) = try await applyCredentialChange(update, to: user, requiring: .enabled)
        return (updated, session)
    }

    /// Writes a change of email or password, with the revocation it implies, and starts the
    /// caller's new session after the revocation's watermark.
    private func applyCredentialChange(
        _ update: UserUpdate, to user: User, requiring precondition: UserRepository.Precondition
    ) async throws -> (User, SessionTokens) {
        var update = update
        UserUpdatePolicy.applyImplications(to: &update, now: clock.now())
        guard let updated = try await users.update(tenantId: user.tenantId, uid: user.uid, update, requiring: precondition) else {
            throw try await Self.missing(user, in: users, otherwise: AuthError(.emailExists))
        }
        revocation.forget(tenantId: user.tenantId, uid: user.uid)
        // Tokens for the caller are issued after the change, with a fresh auth_time.
        guard
            let session = try await tokens.startSession(
                for: updated, signInProvider: "password", now: max(clock.now(), updated.validSince))
        else { throw try await Self.missing(user, in: users) }
        return (updated, session)
    }

    /// Why an update matched no row: the user is gone (`USER_NOT_FOUND`), disabled
    /// (`USER_DISABLED`), or else `otherwise`.
    private static func missing(
        _ user: User, in users: UserRepository, otherwise: AuthError = AuthError(.userNotFound)
    ) async throws -> AuthError {
        guard let current = try await users.find(tenantId: user.tenantId, uid: user.uid)?.user else {
            return AuthError(.userNotFound)
        }
        return current.disabled ? AuthError(.userDisabled) : otherwise
    }

    /// `accounts:delete` by the user: `ADMIN_ONLY_OPERATION` when self-deletion is off.
    public func deleteSelf(idToken: String?, tenantId: String?) async throws {
        let settings = try await tenants.settings(tenantId: tenantId)
        let (user, claims) = try await authenticate(idToken: idToken, tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeSelfDeletion()
        try SessionPolicy.requireRecentSignIn(
            authTime: claims.authTime, now: clock.now().seconds, windowSeconds: settings.recentLoginWindowSeconds)
        guard try await users.delete(tenantId: tenantId, uid: user.uid) else { throw AuthError(.userNotFound) }
        revocation.forget(tenantId: tenantId, uid: user.uid)
    }

    // MARK: Admin

    /// Admin `accounts` create: not subject to self-service switches.
    public func adminCreate(
        tenantId: String?, uid: String?, email: String?, password: String?, emailVerified: Bool, profile: Profile,
        disabled: Bool
    ) async throws -> User {
        let settings = try await tenants.settings(tenantId: tenantId)
        let profile = try profile.validated()
        let id = uid ?? Self.newUID()
        guard !id.isEmpty, id.count <= 128 else { throw AuthError(.invalidLocalId) }
        var user = User(
            tenantId: tenantId, uid: id, emailVerified: emailVerified, displayName: profile.displayName,
            photoURL: profile.photoURL, disabled: disabled, createdAt: clock.now().date)
        if let email { user.email = try EmailAddress.validate(email) }
        var hash: String?
        if let password {
            try settings.passwordPolicy.check(password)
            hash = try await passwords.hash(password, settings: settings)
            user.hasPassword = true
        }
        return try await users.create(user, passwordHash: hash)
    }

    /// Admin `accounts:update`: disable/enable, revoke (`validSince`, unix seconds), verify
    /// email, claims, profile. Only the given fields are written; disabling revokes.
    public func adminUpdate(
        tenantId: String?, uid: String, disabled: Bool?, validSince: Int64?, emailVerified: Bool?,
        customAttributes: [String: JSONValue]?, displayName: String?
    ) async throws -> User {
        _ = try await tenants.settings(tenantId: tenantId)
        var update = UserUpdate(disabled: disabled, customAttributes: customAttributes)
        update.emailVerified = emailVerified
        if let displayName { update.displayName = .some(try UserProfile.validate(displayName: displayName)) }
        if let validSince { update.revocation = .at(Timestamp(seconds: validSince)) }
        UserUpdatePolicy.applyImplications(to: &update, now: clock.now())
        guard let user = try await users.update(tenantId: tenantId, uid: uid, update) else { throw AuthError(.userNotFound) }
        if update.changesRevocationState { revocation.forget(tenantId: tenantId, uid: uid) }
        return user
    }

    /// Admin `accounts:delete`: ignores `disabledUserDeletion`.
    public func adminDelete(tenantId: String?, uid: String) async throws {
        _ = try await tenants.settings(tenantId: tenantId)
        guard try await users.delete(tenantId: tenantId, uid: uid) else { throw AuthError(.userNotFound) }
        revocation.forget(tenantId: tenantId, uid: uid)
    }

    /// Admin lookup by uid: `nil` when there is no such user; any other failure is thrown.
    public func adminLookup(tenantId: String?, uid: String) async throws -> User? {
        _ = try await tenants.settings(tenantId: tenantId)
        return try await users.find(tenantId: tenantId, uid: uid)?.user
    }
}
