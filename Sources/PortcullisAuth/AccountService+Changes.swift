import Foundation
public import PortcullisCore
import PortcullisCrypto
import PortcullisStore

extension AccountService {
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
        /// Provider ids to unlink (`password` removes the password).
        public var deleteProviders: Set<String> = []

        /// Creates changes.
        public init(
            email: String? = nil, password: String? = nil, profile: Profile = Profile(), deleteAttributes: Set<String> = [],
            deleteProviders: Set<String> = []
        ) {
            self.email = email
            self.password = password
            self.profile = profile
            self.deleteAttributes = deleteAttributes
            self.deleteProviders = deleteProviders
        }
    }

    /// `accounts:update` with an ID token (`tenantId`: the one the body names, if any).
    /// Password and email changes return new tokens.
    ///
    /// Only the fields the request names are written, in one statement: a concurrent
    /// change to another field (an admin disabling the user, another revocation) stands.
    public func update(
        idToken: String?, tenantId named: String?, changes: Changes
    ) async throws -> (user: User, tokens: SessionTokens?) {
        let endUser = try await endUserTenant(named: named, idToken: idToken)
        let (tenant, settings) = (endUser.scope, endUser.settings)
        var (user, claims) = try await authenticate(idToken: idToken, tenant: tenant)
        let profile = try changes.profile.validated()
        var update = UserUpdate()
        if let name = profile.displayName { update.displayName = .some(name) }
        if let photo = profile.photoURL { update.photoURL = .some(photo) }
        if changes.deleteAttributes.contains("DISPLAY_NAME") { update.displayName = .some(nil) }
        if changes.deleteAttributes.contains("PHOTO_URL") { update.photoURL = .some(nil) }
        let changesCredential = changes.email != nil || changes.password != nil
        if changesCredential {
            // The presented token's own auth_time is what the recent-login rule judges.
            try SessionPolicy.requireRecentSignIn(
                authTime: claims.authTime, now: clock.now().seconds, windowSeconds: settings.recentLoginWindowSeconds,
                anonymous: SessionPolicy.isGuestSession(user, signInProvider: claims.signInProvider))
            if let email = changes.email { update.email = .some(try EmailAddress.validate(email)) }
            if let password = changes.password {
                try settings.passwordPolicy.check(password)
                update.passwordHash = try await passwords.hash(password, settings: settings, tenant: tenant)
            }
        }
        // Every check first: a request refused for another field unlinks nothing.
        if !changes.deleteProviders.isEmpty {
            user = try await unlink(changes.deleteProviders, from: user, authTime: claims.authTime)
        }
        guard changesCredential else {
            guard let updated = try await users.update(tenant: tenant, uid: user.uid, update, requiring: .enabled) else {
                throw try await Self.missing(user, in: users)
            }
            return (updated, nil)
        }
        let (updated, session) = try await applyCredentialChange(update, to: user, requiring: .enabled)
        return (updated, session)
    }

    /// Unlinks providers (`deleteProvider`) for the caller whose session signed in at
    /// `authTime`; `INVALID_ARGUMENT` when that would leave the account without any way to
    /// sign in. Both judged on the account as locked for the change: a session revoked since
    /// it was checked unlinks nothing (`TOKEN_EXPIRED`).
    private func unlink(_ providerIds: Set<String>, from user: User, authTime: Int64) async throws -> User {
        let unlinked: User? = try await database.withTransaction { [users, links] transaction in
            guard var current = try await users.lock(tenant: user.scope, uid: user.uid, in: transaction) else { return nil }
            try SessionPolicy.requireLive(authTime: authTime, validSince: current.validSince, disabled: current.disabled)
            if AccountLinking.wouldRemoveLastSignInMethod(current, removing: providerIds) {
                throw AuthError(.invalidArgument, detail: "deleteProvider would remove the account's last sign-in method")
            }
            try await links.unlink(providerIds, from: current.uid, tenant: current.scope, in: transaction)
            current.providers.removeAll { providerIds.contains($0.providerId) }
            guard providerIds.contains(ProviderLink.password), current.hasPassword else { return current }
            // Removing the password revokes nothing (unlinking a provider never does).
            var update = UserUpdate()
            update.passwordHash = .some(nil)
            return try await users.update(tenant: current.scope, uid: current.uid, update, requiring: .enabled, in: transaction)
        }
        guard let unlinked else { throw try await Self.missing(user, in: users) }
        return unlinked
    }

    /// Writes a change of email or password, with the revocation it implies, and starts the
    /// caller's new session after the revocation's watermark.
    func applyCredentialChange(
        _ update: UserUpdate, to user: User, requiring precondition: UserRepository.Precondition
    ) async throws -> (User, SessionTokens) {
        var update = update
        UserUpdatePolicy.applyImplications(to: &update, now: clock.now())
        guard let updated = try await users.update(tenant: user.scope, uid: user.uid, update, requiring: precondition) else {
            throw try await Self.missing(user, in: users, otherwise: AuthError(.emailExists))
        }
        // Tokens for the caller are issued after the change's second, with a fresh auth_time,
        // unless a later change (or revocation) holds now: that one ended this change's sessions,
        // the caller's new one included, as if it had started before it (TOKEN_EXPIRED).
        guard
            let session = try await tokens.startSession(
                for: updated, signInProvider: "password", now: updated.validSince, validSince: updated.validSince)
        else { throw try await Self.missing(user, in: users, otherwise: AuthError(.tokenExpired)) }
        return (updated, session)
    }

    /// Why an update matched no row: the user is gone (`USER_NOT_FOUND`), disabled
    /// (`USER_DISABLED`), or else `otherwise`.
    static func missing(
        _ user: User, in users: UserRepository, otherwise: AuthError = AuthError(.userNotFound)
    ) async throws -> AuthError {
        guard let current = try await users.find(tenant: user.scope, uid: user.uid)?.user else {
            return AuthError(.userNotFound)
        }
        return current.disabled ? AuthError(.userDisabled) : otherwise
    }

    /// `accounts:delete` by the user (`tenantId`: the one the body names, if any):
    /// `ADMIN_ONLY_OPERATION` when self-deletion is off.
    public func deleteSelf(idToken: String?, tenantId named: String?) async throws {
        let tenant = try await endUserTenant(named: named, idToken: idToken)
        let (user, claims) = try await authenticate(idToken: idToken, tenant: tenant.scope)
        try tenant.selfService.authorizeSelfDeletion()
        try SessionPolicy.requireRecentSignIn(
            authTime: claims.authTime, now: clock.now().seconds, windowSeconds: tenant.settings.recentLoginWindowSeconds)
        guard try await users.delete(tenant: tenant.scope, uid: user.uid) else { throw AuthError(.userNotFound) }
    }
}
