/// Whose tokens a verifier accepts: the project's own users, one tenant's, or any tenant's.
public enum AcceptedTenants: Sendable, Hashable {
    /// Only the project's own users (tokens without `firebase.tenant`; issuer
    /// `<public URL>/<project>`).
    case projectUsers
    /// Only the users of this tenant (issuer `<public URL>/<project>/tenants/<tenant>`).
    case tenant(String)
    /// The users of any tenant, not the project's own users.
    ///
    /// The token's `firebase.tenant` is read before verification, only to choose which
    /// tenant's JWKS to fetch; the signature (by that tenant's key), the issuer and the
    /// claim itself are then checked against that tenant, so altering it cannot help.
    case anyTenant
    /// The project's own users and the users of any tenant.
    case projectUsersAndAnyTenant

    /// Whether a token of `tenant` (`nil`: a project user) is accepted.
    func accepts(_ tenant: String?) -> Bool {
        switch (self, tenant) {
        case (.projectUsers, nil), (.anyTenant, _?), (.projectUsersAndAnyTenant, _): true
        case (.tenant(let pinned), let tenant?): pinned == tenant
        default: false
        }
    }
}
