import Foundation
public import PortcullisCore
public import PortcullisCrypto
public import PortcullisJSON
public import PortcullisStore

/// Account operations of the admin API (`/v1/projects/{p}[/tenants/{t}]/accounts…`), the way
/// the Admin SDKs use them. The self-service switches never apply here; the tenant comes
/// from the path, already authorised for the caller's key. Every change is one transaction
/// with its audit row, naming `actor`.
///
/// Reads and bulk operations (lookup, pages, queries, bulk deletion) are in
/// `AdminAccountService+Bulk.swift`.
public struct AdminAccountService: Sendable {
    let users: UserRepository
    let tenants: TenantSettingsCache
    let passwords: PasswordHashingService
    let clock: any WallClock

    /// An admin account service.
    public init(
        users: UserRepository, tenants: TenantSettingsCache, passwords: PasswordHashingService,
        clock: any WallClock
    ) {
        self.users = users
        self.tenants = tenants
        self.passwords = passwords
        self.clock = clock
    }

    /// `accounts` (create): not subject to self-service switches. `DUPLICATE_LOCAL_ID`,
    /// `EMAIL_EXISTS`; a phone number is `OPERATION_NOT_ALLOWED` (`AdminUserPolicy`).
    public func create(
        tenant: TenantScope, uid: String?, email: String?, password: String?, emailVerified: Bool, profile: AccountService.Profile,
        disabled: Bool, phoneNumber: String? = nil, actor: String
    ) async throws -> User {
        let settings = try await tenants.settings(tenant: tenant)
        guard phoneNumber == nil else { throw AdminUserPolicy.phoneNumbersUnsupported }
        let profile = try profile.validated()
        let id = uid ?? AccountService.newUID()
        guard !id.isEmpty, id.count <= 128 else { throw AuthError(.invalidLocalId) }
        var user = User(
            tenantId: tenant.tenantId, uid: id, emailVerified: emailVerified, displayName: profile.displayName,
            photoURL: profile.photoURL, disabled: disabled, createdAt: clock.now().date)
        if let email { user.email = try EmailAddress.validate(email) }
        var hash: String?
        if let password {
            try settings.passwordPolicy.check(password)
            hash = try await passwords.hash(password, settings: settings, tenant: tenant)
            user.hasPassword = true
        }
        return try await users.create(user, passwordHash: hash, actor: actor)
    }

    /// What an admin `accounts:update` may change. Fields left `nil` (or empty) stay as stored.
    public struct Changes: Sendable {
        /// New email (validated here); the account's email is then unverified unless
        /// ``emailVerified`` says otherwise, and every session is revoked.
        public var email: String?
        /// New password, hashed with the tenant's parameters; every session is revoked.
        public var password: String?
        /// New display name.
        public var displayName: String?
        /// New photo URL.
        public var photoURL: String?
        /// Refused: Portcullis has no phone numbers.
        public var phoneNumber: String?
        /// Disable (revokes every session) or enable.
        public var disabled: Bool?
        /// Manual verification (or its withdrawal).
        public var emailVerified: Bool?
        /// New custom claims (already validated by `CustomClaims`); empty clears them.
        public var customAttributes: [String: JSONValue]?
        /// Unix seconds: sessions started before are revoked (Admin SDKs' `revoke_refresh_tokens`).
        public var validSince: Int64?
        /// `deleteAttribute`: `DISPLAY_NAME`, `PHOTO_URL`, `EMAIL`, `PASSWORD`. A deletion
        /// wins over a new value of the same attribute in the same request.
        public var deleteAttributes: [String]
        /// `deleteProvider`: provider ids to unlink (`password` removes the password), the last one included.
        public var deleteProviders: [String]
        /// `linkProviderUserInfo` (built by `AdminUserPolicy.link(providerId:rawId:email:displayName:photoURL:)`).
        public var linkProvider: ProviderLink?

        /// Changes.
        public init(
            email: String? = nil, password: String? = nil, displayName: String? = nil, photoURL: String? = nil,
            phoneNumber: String? = nil, disabled: Bool? = nil, emailVerified: Bool? = nil,
            customAttributes: [String: JSONValue]? = nil, validSince: Int64? = nil, deleteAttributes: [String] = [],
            deleteProviders: [String] = [], linkProvider: ProviderLink? = nil
        ) {
            self.email = email
            self.password = password
            self.displayName = displayName
            self.photoURL = photoURL
            self.phoneNumber = phoneNumber
            self.disabled = disabled
            self.emailVerified = emailVerified
            self.customAttributes = customAttributes
            self.validSince = validSince
            self.deleteAttributes = deleteAttributes
            self.deleteProviders = deleteProviders
            self.linkProvider = linkProvider
        }

        /// The request fields present, by their wire names, for the audit log (never a value).
        var fieldNames: [String] {
            let named: [(String, Bool)] = [
                ("email", email != nil), ("password", password != nil), ("displayName", displayName != nil),
                ("photoUrl", photoURL != nil), ("disableUser", disabled != nil), ("emailVerified", emailVerified != nil),
                ("customAttributes", customAttributes != nil), ("validSince", validSince != nil),
                ("deleteAttribute", !deleteAttributes.isEmpty), ("deleteProvider", !deleteProviders.isEmpty),
                ("linkProviderUserInfo", linkProvider != nil),
            ]
            return named.filter(\.1).map(\.0)
        }
    }

    /// `accounts:update`: every given field in one transaction (with its audit row); only
    /// those fields change, so a concurrent change to another field stands. Disabling, a new
    /// password and a new email revoke every session (`UserUpdatePolicy`); an explicit
    /// `validSince` wins. `USER_NOT_FOUND`, `EMAIL_EXISTS`, `FEDERATED_USER_ID_ALREADY_LINKED`,
    /// the tenant's password policy's errors, `INVALID_ARGUMENT` for bad values.
    public func update(tenant: TenantScope, uid: String, _ changes: Changes, actor: String) async throws -> User {
        let settings = try await tenants.settings(tenant: tenant)
        guard changes.phoneNumber == nil else { throw AdminUserPolicy.phoneNumbersUnsupported }
        let deleted = try AdminUserPolicy.attributes(changes.deleteAttributes)
        var unlinking = Set(changes.deleteProviders)
        if deleted.contains(.password) { unlinking.insert(ProviderLink.password) }

        var update = UserUpdate(disabled: changes.disabled, customAttributes: changes.customAttributes)
        update.emailVerified = changes.emailVerified
        if let name = changes.displayName { update.displayName = .some(try UserProfile.validate(displayName: name)) }
        if let url = changes.photoURL { update.photoURL = .some(try UserProfile.validate(photoURL: url)) }
        if let email = changes.email { update.email = .some(try EmailAddress.validate(email)) }
        if deleted.contains(.displayName) { update.displayName = .some(nil) }
        if deleted.contains(.photoURL) { update.photoURL = .some(nil) }
        if deleted.contains(.email) { update.email = .some(nil) }
        if let validSince = changes.validSince { update.revocation = .at(try AdminUserPolicy.validSince(validSince)) }
        // Hashing comes after every other check: a refused request costs no scrypt.
        if let password = changes.password, !unlinking.contains(ProviderLink.password) {
            try settings.passwordPolicy.check(password)
            update.passwordHash = try await passwords.hash(password, settings: settings, tenant: tenant)
        }
        UserUpdatePolicy.applyImplications(to: &update, now: clock.now())
        // Removing the password revokes nothing (unlinking a provider never does).
        if unlinking.contains(ProviderLink.password) { update.passwordHash = .some(nil) }
        guard
            let user = try await users.update(
                tenant: tenant, uid: uid, update, unlinking: unlinking, linking: changes.linkProvider, actor: actor,
                fields: changes.fieldNames)
        else { throw AuthError(.userNotFound) }
        return user
    }

    /// `accounts:delete`: ignores `disabledUserDeletion`. `USER_NOT_FOUND` when absent.
    public func delete(tenant: TenantScope, uid: String, actor: String) async throws {
        _ = try await tenants.settings(tenant: tenant)
        guard try await users.delete(tenant: tenant, uid: uid, actor: actor) else { throw AuthError(.userNotFound) }
    }

    /// `accounts:lookup` by uid: `nil` when there is no such user; any other failure is thrown.
    public func lookup(tenant: TenantScope, uid: String) async throws -> User? {
        _ = try await tenants.settings(tenant: tenant)
        return try await users.find(tenant: tenant, uid: uid)?.user
    }
}
