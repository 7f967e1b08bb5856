import Foundation
public import PortcullisCore
public import PortcullisCrypto
import PortcullisJSON
public import PortcullisStore

/// Email actions (DESIGN.md §2, issue 14): issuing action codes with their messages
/// (`accounts:sendOobCode`), inspecting them and applying them (`accounts:resetPassword`,
/// `accounts:update` with `oobCode`, the action page).
///
/// Codes are 256-bit random strings stored only as SHA-256, single-use, expiring after
/// the tenant's `oobCodeLifetimeSeconds`, and bound to tenant, user, purpose and address.
/// End users never get a code or link back: it travels only in the message, written to
/// the outbox in the transaction that stores the code. Admins may take the link instead.
public struct EmailActionService: Sendable {
    let database: Database
    let accounts: AccountService
    let users: UserRepository
    let codes: ActionCodeRepository
    let outbox: EmailOutboxRepository
    let audit: AuditLogRepository
    let tenants: TenantSettingsCache
    let passwords: PasswordHashingService
    let delivery: EmailDeliveryService
    let masterKey: MasterKey
    let links: LinkSettings
    let abuse: AbuseGuard
    let clock: any WallClock

    /// What action links are made of.
    public struct LinkSettings: Sendable {
        /// The gateway's public URL (the action page lives under it).
        public var publicURL: String
        /// The product name of project users' messages.
        public var projectId: String
        /// The `apiKey` of links made for admins, who call without one.
        public var defaultAPIKey: String?

        /// Link settings.
        public init(publicURL: String, projectId: String, defaultAPIKey: String?) {
            self.publicURL = publicURL
            self.projectId = projectId
            self.defaultAPIKey = defaultAPIKey
        }
    }

    /// A service issuing codes through `codes` and delivering through `delivery`.
    public init(
        database: Database, accounts: AccountService, users: UserRepository, codes: ActionCodeRepository,
        outbox: EmailOutboxRepository, audit: AuditLogRepository, tenants: TenantSettingsCache,
        passwords: PasswordHashingService, delivery: EmailDeliveryService, masterKey: MasterKey,
        links: LinkSettings, abuse: AbuseGuard, clock: any WallClock
    ) {
        self.database = database
        self.accounts = accounts
        self.users = users
        self.codes = codes
        self.outbox = outbox
        self.audit = audit
        self.tenants = tenants
        self.passwords = passwords
        self.delivery = delivery
        self.masterKey = masterKey
        self.links = links
        self.abuse = abuse
        self.clock = clock
    }

    /// An `accounts:sendOobCode` request.
    public struct SendRequest: Sendable {
        /// `requestType`.
        public var kind: EmailActionKind
        /// The account's email (resets; admins for every kind).
        public var email: String?
        /// The new address of an email change.
        public var newEmail: String?
        /// The signed-in user (end users' verification and email change).
        public var idToken: String?
        /// Where the action page sends the user afterwards.
        public var continueURL: String?
        /// `X-Firebase-Locale`.
        public var locale: String?
        /// The API key the request came with, repeated in the link.
        public var apiKey: String?

        /// A request.
        public init(
            kind: EmailActionKind, email: String? = nil, newEmail: String? = nil, idToken: String? = nil,
            continueURL: String? = nil, locale: String? = nil, apiKey: String? = nil
        ) {
            self.kind = kind
            self.email = email
            self.newEmail = newEmail
            self.idToken = idToken
            self.continueURL = continueURL
            self.locale = locale
            self.apiKey = apiKey
        }
    }

    // MARK: Issuing

    /// `accounts:sendOobCode` from an end user: sends the message and returns the email to
    /// echo. With email privacy on, a reset for an unknown or disabled account answers the
    /// same as for a real one and sends nothing.
    public func send(_ request: SendRequest, tenantId named: String?, client: IPAddress?) async throws -> String {
        // A verification or email change carries the user's ID token: its tenant, when the body names none.
        let endUser = try await accounts.endUserTenant(named: named, idToken: request.kind == .passwordReset ? nil : request.idToken)
        let (tenant, settings) = (endUser.scope, endUser.settings)
        let privacy = EmailPrivacyPolicy(settings: settings)
        // Every request counts, whatever the address: an unknown one would otherwise be a free probe.
        if let client, !abuse.ipEmailActions.consume(ClientAddress.limitKey(client), now: clock.now().seconds) {
            throw AuthError(.tooManyAttemptsTryLater)
        }
        let target: (user: User, address: String)
        switch request.kind {
        case .passwordReset:
            let email = try EmailAddress.validate(try Self.required(request.email, .missingEmail))
            let user = try await users.find(tenant: tenant, email: email)?.user
            guard let user, !user.disabled else {
                if let refusal = privacy.resetRefusal(accountExists: user != nil) { throw refusal }
                return email
            }
            target = (user, email)
        case .verifyEmail:
            let (user, _) = try await accounts.authenticate(idToken: request.idToken, tenant: tenant)
            target = (user, try Self.required(user.email, .missingEmail))
        case .verifyAndChangeEmail:
            let (user, claims) = try await accounts.authenticate(idToken: request.idToken, tenant: tenant)
            try SessionPolicy.requireRecentSignIn(
                authTime: claims.authTime, now: clock.now().seconds, windowSeconds: settings.recentLoginWindowSeconds)
            let address = try await newAddress(request.newEmail, tenant: tenant, revealTaken: privacy.revealsTakenAddress)
            target = (user, address)
        }
        do {
            _ = try await issue(
                request, for: target.user, address: target.address, settings: settings, sending: true,
                // A reset is asked for by whoever knows the address: nobody signed in.
                actor: request.kind == .passwordReset ? "anonymous" : "user:\(target.user.uid)")
        } catch let error as AuthError where privacy.hides(error, refusing: request.kind) {
            return target.address
        }
        return request.kind == .verifyAndChangeEmail ? (target.user.email ?? target.address) : target.address
    }

    /// `accounts:sendOobCode` from an admin: the account is named by `email`. With
    /// `returnLink` the link is returned and nothing is sent (`generatePasswordResetLink`,
    /// `generateEmailVerificationLink`, `generateVerifyAndChangeEmailLink`).
    public func adminSend(
        _ request: SendRequest, tenant: TenantScope, returnLink: Bool, actor: String
    ) async throws -> (email: String, link: String?) {
        let settings = try await tenants.settings(tenant: tenant)
        let email = try EmailAddress.validate(try Self.required(request.email, .missingEmail))
        guard let user = try await users.find(tenant: tenant, email: email)?.user else {
            throw AuthError(.emailNotFound)
        }
        let address =
            request.kind == .verifyAndChangeEmail
            ? try await newAddress(request.newEmail, tenant: tenant, revealTaken: true) : email
        let link = try await issue(request, for: user, address: address, settings: settings, sending: !returnLink, actor: actor)
        return (email, returnLink ? link : nil)
    }

    /// A validated new address that no other account holds (when that may be said).
    private func newAddress(_ text: String?, tenant: TenantScope, revealTaken: Bool) async throws -> String {
        let address = try EmailAddress.validate(try Self.required(text, .missingNewEmail))
        if revealTaken, try await users.find(tenant: tenant, email: address) != nil {
            throw AuthError(.emailExists)
        }
        return address
    }

    /// Stores a new code for `user` and, when `sending`, its message; returns the link.
    private func issue(
        _ request: SendRequest, for user: User, address: String, settings: TenantSettings, sending: Bool, actor: String
    ) async throws -> String {
        let tenant = user.scope
        let tenantId = user.tenantId
        let continueURL = try request.continueURL.map { url throws(AuthError) in
            try ContinueURLPolicy.validate(url, authorizedDomains: settings.authorizedDomains, publicURL: links.publicURL)
        }
        let now = clock.now()
        let code = SecretToken.random()
        let link = ActionLink.make(
            publicURL: links.publicURL, kind: request.kind, code: code, apiKey: request.apiKey ?? links.defaultAPIKey,
            continueURL: continueURL, languageCode: request.locale, tenantId: tenantId)
        var entry: OutboxEntry?
        if sending {
            guard try await delivery.delivery(for: settings, tenant: tenant) != nil else {
                throw AuthError(.operationNotAllowed, detail: "no email delivery is configured for this tenant")
            }
            let message = EmailMessage(
                id: "", tenantId: tenantId, kind: request.kind, uid: user.uid, recipient: address,
                email: user.email ?? address, link: link, locale: request.locale, displayName: user.displayName,
                appName: settings.displayName ?? links.projectId)
            entry = OutboxEntry(
                tenantId: tenantId, kind: request.kind, uid: user.uid, recipient: address,
                sealedContent: try masterKey.seal(
                    Array(message.content.serialized().utf8),
                    context: EmailDeliveryService.sealingContext(tenant: tenant)))
        }
        let record = AuditEntry(
            tenantId: tenantId, actor: actor, action: sending ? "email.sent" : "email.link_generated",
            target: "users/\(user.uid)", after: .object(["type": .string(request.kind.rawValue)]))
        // The code, its message and its record in one transaction, under the user's row held
        // `FOR SHARE`: counts per user come in order, and a deletion waits or came first.
        try await database.withTransaction { [codes, outbox, audit, entry] transaction in
            guard
                let issuer = try await codes.lockIssuer(
                    tenant: tenant, uid: user.uid, kind: request.kind, now: now, in: transaction)
            else { throw AuthError(.userNotFound) }
            try EmailActionPolicy.requireUnflooded(request.kind, recentCodes: issuer.recentCodes)
            try await codes.insert(
                ActionCode(
                    tenantId: tenantId, uid: user.uid, kind: request.kind, email: address, continueURL: continueURL,
                    expiresAt: now.adding(seconds: Int64(settings.oobCodeLifetimeSeconds)), issuedAt: issuer.issuedAt,
                    accountEmail: issuer.accountEmail),
                codeHash: SecretToken.hash(code), in: transaction)
            if let entry { try await outbox.enqueue(entry, in: transaction) }
            try await audit.record(record, in: transaction)
        }
        if sending { delivery.wake() }
        return link
    }

    // MARK: Applying

    /// What a code is for, without using it (`accounts:resetPassword` without `newPassword`,
    /// the action page before its form); `INVALID_OOB_CODE` for a code that no longer works
    /// (`EmailActionPolicy.requireLive(_:for:)`).
    /// - Returns: the code, and its user's current email (the old address of an email change).
    public func inspect(code: String?, tenant: TenantScope) async throws -> (ActionCode, currentEmail: String?) {
        _ = try await EndUserTenant.resolve(tenant, in: tenants)
        return try await live(Self.hash(code), tenant: tenant)
    }

    /// The unused, unexpired code with this hash, if it still works for its user as stored now.
    private func live(_ codeHash: [UInt8], tenant: TenantScope) async throws -> (ActionCode, currentEmail: String?) {
        let found = try EmailActionPolicy.requireUnexpired(
            try await codes.find(tenant: tenant, codeHash: codeHash), now: clock.now())
        guard let user = try await users.find(tenant: tenant, uid: found.uid)?.user else {
            throw AuthError(.invalidOobCode)
        }
        try EmailActionPolicy.requireLive(found, for: user)
        return (found, user.email)
    }

    /// `accounts:update` with `oobCode`: applies a verification or an email change.
    public func apply(code: String?, tenant: TenantScope) async throws -> (ActionCode, User) {
        let settings = try await EndUserTenant.resolve(tenant, in: tenants).settings
        let (applied, user) = try await consume(
            code, tenant: tenant, kinds: [.verifyEmail, .verifyAndChangeEmail], passwordHash: nil)
        return (onwards(applied, settings: settings), user)
    }

    /// `accounts:resetPassword` with `oobCode` and `newPassword`: sets the password, marks the
    /// email verified and revokes every session. The code is spent only if the password is
    /// accepted.
    public func resetPassword(code: String?, newPassword: String, tenant: TenantScope) async throws -> (ActionCode, User) {
        let settings = try await EndUserTenant.resolve(tenant, in: tenants).settings
        // A dead code is refused before the password costs a hash.
        _ = try await live(Self.hash(code), tenant: tenant)
        try settings.passwordPolicy.check(newPassword)
        let passwordHash = try await passwords.hash(newPassword, settings: settings, tenant: tenant)
        let (applied, user) = try await consume(code, tenant: tenant, kinds: [.passwordReset], passwordHash: passwordHash)
        return (onwards(applied, settings: settings), user)
    }

    /// The code with its continue URL checked again, as the tenant's authorised domains stand
    /// now: a domain removed since the code was issued (or a code stored before URLs were
    /// normalised) sends nobody there; the action page then shows its own confirmation.
    private func onwards(_ code: ActionCode, settings: TenantSettings) -> ActionCode {
        var code = code
        code.continueURL = code.continueURL.flatMap { url in
            try? ContinueURLPolicy.validate(url, authorizedDomains: settings.authorizedDomains, publicURL: links.publicURL)
        }
        return code
    }

    private func consume(
        _ code: String?, tenant: TenantScope, kinds: Set<EmailActionKind>, passwordHash: String?
    ) async throws -> (ActionCode, User) {
        let now = clock.now()
        let codeHash = try Self.hash(code)
        // The code is spent exactly when the change is written: anything thrown leaves it unspent.
        return try await database.withTransaction { [codes, users, audit] transaction in
            let used = try await codes.use(tenant: tenant, codeHash: codeHash, kinds: kinds, now: now, in: transaction)
            let code = try EmailActionPolicy.requireUnexpired(used, now: now)
            // A code outliving its user (issued as the user was deleted) proves nothing.
            guard let user = try await users.lock(tenant: tenant, uid: code.uid, in: transaction) else {
                throw AuthError(.invalidOobCode)
            }
            let update = try EmailActionPolicy.change(applying: code, to: user, passwordHash: passwordHash, now: now)
            guard let updated = try await users.update(tenant: tenant, uid: code.uid, update, requiring: .none, in: transaction)
            else { throw AuthError(.invalidOobCode) }
            try await audit.record(
                AuditEntry(
                    tenantId: tenant.tenantId, actor: "user:\(code.uid)", action: "email.applied", target: "users/\(code.uid)",
                    after: .object(["type": .string(code.kind.rawValue)])),
                in: transaction)
            return (code, updated)
        }
    }

    private static func hash(_ code: String?) throws(AuthError) -> [UInt8] {
        SecretToken.hash(try required(code, .missingOobCode))
    }

    private static func required(_ value: String?, _ missing: AuthError.Code) throws(AuthError) -> String {
        guard let value, !value.isEmpty else { throw AuthError(missing) }
        return value
    }
}
