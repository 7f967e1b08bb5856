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

    /// An account service.
    public init(
        users: UserRepository, tenants: TenantSettingsCache, tokens: TokenService, revocation: RevocationCache,
        passwords: PasswordHashingService, abuse: AbuseGuard
    ) {
        self.users = users
        self.tenants = tenants
        self.tokens = tokens
        self.revocation = revocation
        self.passwords = passwords
        self.abuse = abuse
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

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

    // MARK: Sign-up and sign-in

    /// `accounts:signUp`: password, anonymous, or (with `idToken`) upgrading an anonymous user.
    public func signUp(
        tenantId: String?, email: String?, password: String?, displayName: String?, photoURL: String?,
        idToken: String?, clientIP: String?
    ) async throws -> SignedIn {
        let settings = try await tenants.settings(tenantId: tenantId)
        let policy = SelfServicePolicy(settings: settings)
        if let idToken {
            try policy.authorizeEndUserRequest()
            let (user, _) = try await authenticate(idToken: idToken, tenantId: tenantId)
            guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
            guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
            guard settings.allowPasswordSignup else { throw AuthError(.operationNotAllowed) }
            let upgraded = try await apply(
                .init(email: email, password: password, displayName: displayName, photoURL: photoURL), to: user,
                settings: settings, authTime: Self.now())
            guard let session = upgraded.tokens else { throw AuthError(.internalError) }
            return SignedIn(user: upgraded.user, tokens: session)
        }
        let method: SignUpMethod = (email == nil && password == nil) ? .anonymous : .password
        try policy.authorizeSignUp(method)
        let now = Self.now()
        if let clientIP {
            guard !abuse.ipSignUps.isExhausted(clientIP, now: now) else { throw AuthError(.tooManyAttemptsTryLater) }
            abuse.ipSignUps.record(clientIP, now: now)
        }
        var user = User(
            tenantId: tenantId, uid: Self.newUID(), displayName: displayName, photoURL: photoURL,
            createdAt: Date(timeIntervalSince1970: TimeInterval(now)), lastLoginAt: Date(timeIntervalSince1970: TimeInterval(now)))
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
        let session = try await tokens.startSession(
            for: created, signInProvider: method == .anonymous ? "anonymous" : "password", now: now)
        return SignedIn(user: created, tokens: session)
    }

    /// `accounts:signInWithPassword`.
    public func signIn(tenantId: String?, email: String?, password: String?, clientIP: String?) async throws -> SignedIn {
        let settings = try await tenants.settings(tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        guard settings.allowPasswordSignup else { throw AuthError(.passwordLoginDisabled) }
        guard let email, !email.isEmpty else { throw AuthError(.missingEmail) }
        let address = try EmailAddress.validate(email)
        guard let password, !password.isEmpty else { throw AuthError(.missingPassword) }
        let now = Self.now()
        let accountKey = "\(tenantId ?? ""):\(address.lowercased())"
        if abuse.accountFailures.isExhausted(accountKey, now: now) || clientIP.map({ abuse.ipFailures.isExhausted($0, now: now) }) == true {
            throw AuthError(.tooManyAttemptsTryLater)
        }
        let found = try await users.find(tenantId: tenantId, email: address)
        let matches = try await passwords.verify(password, against: found?.passwordHash, settings: settings)
        let privacy = settings.enableImprovedEmailPrivacy
        guard let (user, hash) = found, hash != nil, matches else {
            abuse.accountFailures.record(accountKey, now: now)
            if let clientIP { abuse.ipFailures.record(clientIP, now: now) }
            if privacy { throw AuthError(.invalidLoginCredentials) }
            throw AuthError(found == nil ? .emailNotFound : .invalidPassword)
        }
        guard !user.disabled else { throw AuthError(.userDisabled) }
        var rehashed: String?
        if let hash, passwords.hasher(for: settings).needsRehash(hash) {
            // The hash was made with other parameters: upgrade it now that the password is known.
            rehashed = try await passwords.hash(password, settings: settings)
        }
        let session = try await tokens.startSession(
            for: user, signInProvider: "password", now: now, upgradedPasswordHash: rehashed)
        return SignedIn(user: user, tokens: session)
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
        let claims = try await tokens.verifyIDToken(idToken, now: Self.now())
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
        /// New display name.
        public var displayName: String?
        /// New photo URL.
        public var photoURL: String?
        /// `DISPLAY_NAME`, `PHOTO_URL` to clear.
        public var deleteAttributes: Set<String> = []

        /// Creates changes.
        public init(
            email: String? = nil, password: String? = nil, displayName: String? = nil, photoURL: String? = nil,
            deleteAttributes: Set<String> = []
        ) {
            self.email = email
            self.password = password
            self.displayName = displayName
            self.photoURL = photoURL
            self.deleteAttributes = deleteAttributes
        }
    }

    /// `accounts:update` with an ID token. Password and email changes return new tokens.
    public func update(
        idToken: String?, tenantId: String?, changes: Changes
    ) async throws -> (user: User, tokens: SessionTokens?) {
        let settings = try await tenants.settings(tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeEndUserRequest()
        let (user, claims) = try await authenticate(idToken: idToken, tenantId: tenantId)
        return try await apply(changes, to: user, settings: settings, authTime: claims.authTime)
    }

    private func apply(
        _ changes: Changes, to user: User, settings: TenantSettings, authTime: Int64
    ) async throws -> (user: User, tokens: SessionTokens?) {
        let now = Self.now()
        var next = user
        var hash: String??
        let sensitive = changes.email != nil || changes.password != nil
        if sensitive, !user.isAnonymous {
            try SessionPolicy.requireRecentSignIn(authTime: authTime, now: now, windowSeconds: settings.recentLoginWindowSeconds)
        }
        if let email = changes.email {
            let address = try EmailAddress.validate(email)
            if address.lowercased() != user.email?.lowercased() {
                next.email = address
                next.emailVerified = false
            }
        }
        if let password = changes.password {
            try settings.passwordPolicy.check(password)
            hash = .some(try await passwords.hash(password, settings: settings))
            next.hasPassword = true
        }
        if let displayName = changes.displayName { next.displayName = displayName }
        if let photoURL = changes.photoURL { next.photoURL = photoURL }
        if changes.deleteAttributes.contains("DISPLAY_NAME") { next.displayName = nil }
        if changes.deleteAttributes.contains("PHOTO_URL") { next.photoURL = nil }
        if sensitive { next.validSince = now }
        next = try await users.save(next, passwordHash: hash, revocationChanged: sensitive)
        if sensitive {
            revocation.invalidate(.user(tenantId: user.tenantId, uid: user.uid))
            // Tokens for the caller are issued after the change, with a fresh auth_time.
            return (next, try await tokens.startSession(for: next, signInProvider: "password", now: now))
        }
        return (next, nil)
    }

    /// `accounts:delete` by the user: `ADMIN_ONLY_OPERATION` when self-deletion is off.
    public func deleteSelf(idToken: String?, tenantId: String?) async throws {
        let settings = try await tenants.settings(tenantId: tenantId)
        let (user, claims) = try await authenticate(idToken: idToken, tenantId: tenantId)
        try SelfServicePolicy(settings: settings).authorizeSelfDeletion()
        try SessionPolicy.requireRecentSignIn(
            authTime: claims.authTime, now: Self.now(), windowSeconds: settings.recentLoginWindowSeconds)
        guard try await users.delete(tenantId: tenantId, uid: user.uid) else { throw AuthError(.userNotFound) }
        revocation.invalidate(.user(tenantId: tenantId, uid: user.uid))
    }

    // MARK: Admin

    /// Admin `accounts` create: not subject to self-service switches.
    public func adminCreate(
        tenantId: String?, uid: String?, email: String?, password: String?, emailVerified: Bool, displayName: String?,
        photoURL: String?, disabled: Bool
    ) async throws -> User {
        let settings = try await tenants.settings(tenantId: tenantId)
        let id = uid ?? Self.newUID()
        guard !id.isEmpty, id.count <= 128 else { throw AuthError(.invalidLocalId) }
        var user = User(
            tenantId: tenantId, uid: id, emailVerified: emailVerified, displayName: displayName, photoURL: photoURL,
            disabled: disabled, createdAt: Date())
        if let email { user.email = try EmailAddress.validate(email) }
        var hash: String?
        if let password {
            try settings.passwordPolicy.check(password)
            hash = try await passwords.hash(password, settings: settings)
            user.hasPassword = true
        }
        return try await users.create(user, passwordHash: hash)
    }

    /// Admin `accounts:update`: disable/enable, revoke (`validSince`), verify email, claims, profile.
    public func adminUpdate(
        tenantId: String?, uid: String, disabled: Bool?, validSince: Int64?, emailVerified: Bool?,
        customAttributes: [String: JSONValue]?, displayName: String?
    ) async throws -> User {
        guard var user = try await users.find(tenantId: tenantId, uid: uid)?.user else { throw AuthError(.userNotFound) }
        var revocationChanged = false
        if let disabled, disabled != user.disabled {
            user.disabled = disabled
            revocationChanged = true
            // Disabling also ends every session (DESIGN.md §1).
            if disabled { user.validSince = Self.now() }
        }
        if let validSince {
            user.validSince = validSince
            revocationChanged = true
        }
        if let emailVerified { user.emailVerified = emailVerified }
        if let customAttributes { user.customAttributes = customAttributes }
        if let displayName { user.displayName = displayName }
        user = try await users.save(user, passwordHash: nil, revocationChanged: revocationChanged)
        if revocationChanged { revocation.invalidate(.user(tenantId: tenantId, uid: uid)) }
        return user
    }

    /// Admin `accounts:delete`: ignores `disabledUserDeletion`.
    public func adminDelete(tenantId: String?, uid: String) async throws {
        _ = try await tenants.settings(tenantId: tenantId)
        guard try await users.delete(tenantId: tenantId, uid: uid) else { throw AuthError(.userNotFound) }
        revocation.invalidate(.user(tenantId: tenantId, uid: uid))
    }

    /// Admin lookup by uid.
    public func adminLookup(tenantId: String?, uid: String) async throws -> User {
        _ = try await tenants.settings(tenantId: tenantId)
        guard let user = try await users.find(tenantId: tenantId, uid: uid)?.user else { throw AuthError(.userNotFound) }
        return user
    }
}
