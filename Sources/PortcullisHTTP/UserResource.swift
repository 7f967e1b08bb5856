import Foundation
import PortcullisAuth
import PortcullisCore
import PortcullisCrypto

/// Identity Toolkit's user JSON (`accounts:lookup`'s `users[]`) and token answers.
enum UserResource {
    /// The user as Identity Toolkit renders it. Never the password hash.
    static func json(_ user: User) -> JSONValue {
        var members: [String: JSONValue] = [
            "localId": .string(user.uid),
            "emailVerified": .bool(user.emailVerified),
            "disabled": .bool(user.disabled),
            "validSince": .string(String(user.validSince.seconds)),
            "createdAt": .string(String(Int64(user.createdAt.timeIntervalSince1970 * 1000))),
        ]
        if let email = user.email { members["email"] = .string(email) }
        if let name = user.displayName { members["displayName"] = .string(name) }
        if let photo = user.photoURL { members["photoUrl"] = .string(photo) }
        if let tenantId = user.tenantId { members["tenantId"] = .string(tenantId) }
        if let login = user.lastLoginAt { members["lastLoginAt"] = .string(String(login.milliseconds)) }
        if let refresh = user.lastRefreshAt { members["lastRefreshAt"] = .string(RFC3339.format(refresh)) }
        if !user.customAttributes.isEmpty { members["customAttributes"] = .string(JSONValue.object(user.customAttributes).serialized()) }
        var providers: [JSONValue] = []
        for link in user.providers {
            var info: [String: JSONValue] = [
                "providerId": .string(link.providerId), "federatedId": .string(link.federatedId),
                "rawId": .string(link.federatedId),
            ]
            if let email = link.email { info["email"] = .string(email) }
            // The password provider shows the account's own profile, as Firebase does.
            let isPassword = link.providerId == ProviderLink.password
            if let name = isPassword ? user.displayName : link.displayName { info["displayName"] = .string(name) }
            if let photo = isPassword ? user.photoURL : link.photoURL { info["photoUrl"] = .string(photo) }
            providers.append(.object(info))
        }
        members["providerUserInfo"] = .array(providers)
        return .object(members)
    }

    /// The token fields every sign-in answer carries.
    static func add(_ tokens: SessionTokens, to members: inout [String: JSONValue]) {
        members["idToken"] = .string(tokens.idToken)
        members["refreshToken"] = .string(tokens.refreshToken)
        members["expiresIn"] = .string(String(tokens.expiresIn))
    }
}
