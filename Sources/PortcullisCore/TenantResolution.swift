/// Which tenant an end-user request belongs to (DESIGN.md §2).
///
/// The body's `tenantId` when it names one. Otherwise a request that carries an ID token
/// belongs to that token's tenant: the official JS SDK sends no `tenantId` on
/// `accounts:lookup`, `accounts:update` or `accounts:delete` (only the sign-ins and a few
/// others add it), and reloads the user after every sign-in, so a tenant user's session
/// would fail at once otherwise; Google and the emulator read the tenant from the token.
/// A request with neither is the project's.
///
/// The token's tenant is read before its signature is checked: it only picks which
/// tenant's settings and keys judge the request, and the token must then verify with that
/// tenant's keys and name it, or it is refused.
public enum TenantResolution {
    /// The request's tenant (`nil`: project users).
    ///
    /// - Parameters:
    ///   - named: the body's `tenantId` (`nil` when absent or empty).
    ///   - tokenTenant: the tenant the request's ID token names (`.some(nil)`: a project
    ///     user's token), or `nil` when the request carries no readable ID token.
    /// - Throws: `TENANT_ID_MISMATCH` when the body names another tenant than the token's.
    public static func resolve(named: String?, tokenTenant: String??) throws(AuthError) -> String? {
        guard let tokenTenant else { return named }
        if let named, named != tokenTenant { throw AuthError(.tenantIdMismatch) }
        return tokenTenant
    }
}
