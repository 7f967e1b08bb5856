import Foundation
public import PortcullisCore
public import PortcullisCrypto
public import PortcullisStore

/// Account operations of the admin API (`/v1/projects/{p}[/tenants/{t}]/accounts…`), the way
/// the Admin SDKs use them. The self-service switches never apply here; the tenant comes
/// from the path, already authorised for the caller's key.
public struct AdminAccountService: Sendable {
    let users: UserRepository
    let tenants: TenantSettingsCache
    let revocation: RevocationCache
    let passwords: PasswordHashingService
    let clock: any WallClock

    /// An admin account service.
    public init(
        users: UserRepository, tenants: TenantSettingsCache, revocation: RevocationCache, passwords: PasswordHashingService,
        clock: any WallClock = SystemClock()
    ) {
        self.users = users
        self.tenants = tenants
        self.revocation = revocation
        self.passwords = passwords
        self.clock = clock
    }

    /// `accounts` (create): not subject to self-service switches.
    public func create(
        tenantId: String?, uid: String?, email: String?, password: String?, emailVerified: Bool, profile: AccountService.Profile,
        disabled: Bool
    ) async throws -> User {
        let settings = try await tenants.settings(tenantId: tenantId)
        let profile = try profile.validated()
        let id = uid ?? AccountService.newUID()
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

    /// `accounts:update`: disable/enable, revoke (`validSince`, unix seconds), verify
    /// email, claims, profile. Only the given fields are written; disabling revokes.
    public func update(
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

    /// `accounts:delete`: ignores `disabledUserDeletion`.
    public func delete(tenantId: String?, uid: String) async throws {
        _ = try await tenants.settings(tenantId: tenantId)
        guard try await users.delete(tenantId: tenantId, uid: uid) else { throw AuthError(.userNotFound) }
        revocation.forget(tenantId: tenantId, uid: uid)
    }

    /// `accounts:lookup` by uid: `nil` when there is no such user; any other failure is thrown.
    public func lookup(tenantId: String?, uid: String) async throws -> User? {
        _ = try await tenants.settings(tenantId: tenantId)
        return try await users.find(tenantId: tenantId, uid: uid)?.user
    }
}
