import Foundation
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON

/// `portcullis-bench custom-token KEY_FILE CLIENT_EMAIL KID UID [TENANT]`: one custom token,
/// as firebase-admin mints it (RS256, `kid` = the key id, `iss` = `sub` = the service
/// account, Identity Toolkit's audience, one hour), for `scripts/bench`'s custom-token
/// sign-in run: the bench has no Python packages to mint one with.
enum CustomTokenMinting {
    static func mint(_ arguments: [String]) -> String? {
        guard arguments.count >= 4, let pem = try? String(contentsOfFile: arguments[0], encoding: .utf8),
            let signer = try? RSASigner(pem: pem)
        else { return nil }
        let now = Int64(Date().timeIntervalSince1970)
        var claims: [String: JSONValue] = [
            "iss": .string(arguments[1]), "sub": .string(arguments[1]),
            "aud": "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit",
            "iat": .integer(now), "exp": .integer(now + 3600), "uid": .string(arguments[3]),
            "claims": .object(["plan": "bench"]),
        ]
        if arguments.count > 4 { claims["tenant_id"] = .string(arguments[4]) }
        let header = JSONValue.object(["alg": "RS256", "typ": "JWT", "kid": .string(arguments[2])])
        let input = Base64URL.encode(header.serializedBytes()) + "." + Base64URL.encode(JSONValue.object(claims).serializedBytes())
        guard let signature = try? signer.sign(Array(input.utf8)) else { return nil }
        return input + "." + Base64URL.encode(signature)
    }
}
