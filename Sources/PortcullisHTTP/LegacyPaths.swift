/// Identity Toolkit v3 ("relyingparty") paths, which older Firebase clients call, and the v1
/// operations that replaced them.
///
/// Older SDKs (the JavaScript SDK before v8, the REST guides of their day) call
/// `https://www.googleapis.com/identitytoolkit/v3/relyingparty/<operation>?key=…`. A v3
/// operation takes the same JSON body and gives the same answer as its v1 successor (the
/// `kind` fields still say `identitytoolkit#VerifyPasswordResponse` and so on), so an alias
/// is only a new path: ``PortcullisResponder`` rewrites it before routing, and every operation
/// keeps a single route. The table follows the Firebase emulator's, less the operations
/// Portcullis does not have (phone, email-link sign-in, reCAPTCHA) and the admin ones
/// (`downloadAccount`, `uploadAccount`, `setProjectConfig`), which took OAuth credentials and
/// a `targetProjectId` in the body: current Admin SDKs call the v1 admin paths instead.
enum LegacyPaths {
    /// Where the v3 operations live.
    static let relyingParty = "/identitytoolkit/v3/relyingparty/"

    /// The host prefix under which the Firebase emulator serves the v3 paths.
    static let googleAPIsHost = "/www.googleapis.com"

    /// The v3 operations under ``googleAPIsHost``; made once, as every request is checked.
    private static let hostedRelyingParty = googleAPIsHost + relyingParty

    /// Each v3 operation and the v1 path that serves it.
    static let operations: [Substring: String] = [
        "signupNewUser": "/v1/accounts:signUp",
        "verifyPassword": "/v1/accounts:signInWithPassword",
        "getAccountInfo": "/v1/accounts:lookup",
        "setAccountInfo": "/v1/accounts:update",
        "deleteAccount": "/v1/accounts:delete",
        "getOobConfirmationCode": "/v1/accounts:sendOobCode",
        "resetPassword": "/v1/accounts:resetPassword",
        "createAuthUri": "/v1/accounts:createAuthUri",
        "verifyAssertion": "/v1/accounts:signInWithIdp",
        "verifyCustomToken": "/v1/accounts:signInWithCustomToken",
        // A GET old JavaScript SDKs send at start-up for the authorised domains.
        "getProjectConfig": "/v1/projects",
    ]

    /// The v1 path, query kept (`?key=` names the app), serving the v3 operation `path`
    /// names, at the root or under `/www.googleapis.com`; `nil` when `path` is not a v3
    /// operation Portcullis serves, which the router then answers 404.
    static func v1Path(for path: String) -> String? {
        var rest = Substring(path)
        if rest.hasPrefix(hostedRelyingParty) { rest = rest.dropFirst(googleAPIsHost.count) }
        guard rest.hasPrefix(relyingParty) else { return nil }
        rest = rest.dropFirst(relyingParty.count)
        let operationEnd = rest.firstIndex(of: "?") ?? rest.endIndex
        guard let v1 = operations[rest[..<operationEnd]] else { return nil }
        return v1 + rest[operationEnd...]
    }
}
