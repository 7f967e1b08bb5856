import Foundation
public import Hummingbird
public import PortcullisAuth
import PortcullisCore
import PortcullisCrypto

/// Authenticates admin routes: `Authorization: Bearer <admin key>`.
///
/// No key, a malformed, unknown or revoked key → 401 `UNAUTHENTICATED`. The
/// stored SHA-256 is compared in constant time. A wrong project id in the path
/// → 404, checked only after authentication so it reveals nothing to strangers.
/// Scope (project or tenant) is checked by each route against its target.
///
/// With `acceptsEmulatorAdminCredential` (`portcullis dev` only), `Bearer owner` — what
/// the Admin SDKs send to an emulator (`FIREBASE_AUTH_EMULATOR_HOST`) — is a project key.
public struct AdminAuthenticator: RouterMiddleware {
    public typealias Context = PortcullisRequestContext

    /// The Admin SDKs' emulator credential.
    static let emulatorCredential = "owner"
    /// The key id the emulator credential acts under (audit actor `adminKey:emulator-owner`).
    static let emulatorKeyId = "emulator-owner"

    let keys: AdminKeyService
    let projectId: String
    let acceptsEmulatorAdminCredential: Bool

    /// Authenticates against stored keys, for one project; `acceptsEmulatorAdminCredential`
    /// also takes `Bearer owner` as a project key (development only).
    public init(keys: AdminKeyService, projectId: String, acceptsEmulatorAdminCredential: Bool = false) {
        self.keys = keys
        self.projectId = projectId
        self.acceptsEmulatorAdminCredential = acceptsEmulatorAdminCredential
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let presented = BearerToken.parse(request.headers[.authorization]) else { throw AuthError(.unauthenticated) }
        let principal: AdminPrincipal
        if acceptsEmulatorAdminCredential, presented == Self.emulatorCredential {
            guard context.parameters.get("project") == projectId else { throw AuthError(.projectNotFound) }
            principal = AdminPrincipal(keyId: Self.emulatorKeyId, scope: .project)
        } else {
            guard let key = try await keys.activeKey(secret: presented) else {
                throw AuthError(.unauthenticated)
            }
            guard context.parameters.get("project") == projectId else { throw AuthError(.projectNotFound) }
            try await keys.recordUse(of: key)
            principal = AdminPrincipal(keyId: key.keyId, scope: key.scope)
        }
        var context = context
        context.admin = principal
        context.tenant.set(TenantScope(context.parameters.get("tenant")))
        do {
            return try await next(request, context)
        } catch let error as AuthError {
            // Admin paths name their tenant: an unknown one is the resource missing (404).
            throw error.onResourcePath()
        } catch let conflict as Conflict {
            throw AuthError(conflict).onResourcePath()
        }
    }
}
