import Hummingbird
import PortcullisCore

/// `GET /v2/passwordPolicy`'s answer: the tenant's password policy in the shape the JS SDK's
/// `validatePassword` reads (`customStrengthOptions` required, `schemaVersion` exactly 1).
///
/// With enforcement off only the minimum length of 6 applies, and that is all it lists, so
/// the client and the server judge a password alike. Non-alphanumeric characters are the
/// ones ``TenantSettings/PasswordPolicy/allowedNonAlphanumericCharacters`` names, which is
/// also what the server counts.
struct PasswordPolicyResponse: ResponseEncodable {
    struct StrengthOptions: Encodable {
        let minPasswordLength: Int
        let maxPasswordLength: Int?
        let containsLowercaseCharacter: Bool?
        let containsUppercaseCharacter: Bool?
        let containsNumericCharacter: Bool?
        let containsNonAlphanumericCharacter: Bool?
    }

    let customStrengthOptions: StrengthOptions
    let allowedNonAlphanumericCharacters: [String]
    let enforcementState: String
    let forceUpgradeOnSignin: Bool
    var schemaVersion = 1

    init(_ policy: TenantSettings.PasswordPolicy) {
        let enforced = policy.enforcementState == .enforce
        customStrengthOptions = StrengthOptions(
            minPasswordLength: enforced ? policy.minPasswordLength : 6,
            maxPasswordLength: enforced ? policy.maxPasswordLength : nil,
            containsLowercaseCharacter: enforced && policy.containsLowercaseCharacter ? true : nil,
            containsUppercaseCharacter: enforced && policy.containsUppercaseCharacter ? true : nil,
            containsNumericCharacter: enforced && policy.containsNumericCharacter ? true : nil,
            containsNonAlphanumericCharacter: enforced && policy.containsNonAlphanumericCharacter ? true : nil)
        allowedNonAlphanumericCharacters = TenantSettings.PasswordPolicy.allowedNonAlphanumericCharacters.map(String.init)
        enforcementState = policy.enforcementState.rawValue
        forceUpgradeOnSignin = policy.forceUpgradeOnSignin
    }
}

/// `GET /v2/recaptchaConfig`'s answer: reCAPTCHA enforcement is off for every provider and no
/// site key is sent, which is what Google answers when nothing enforces it. Clients then never
/// load Google's script (the JS SDK loads it only for a provider in `ENFORCE` or `AUDIT`, or
/// after a `MISSING_RECAPTCHA_TOKEN` answer, which Portcullis never gives).
struct RecaptchaConfigResponse: ResponseEncodable {
    struct State: Encodable {
        let provider: String
        let enforcementState: String
    }

    let recaptchaEnforcementState = [
        State(provider: "EMAIL_PASSWORD_PROVIDER", enforcementState: "OFF"),
        State(provider: "PHONE_PROVIDER", enforcementState: "OFF"),
    ]
    let useSmsBotScore = false
    let useSmsTollFraudProtection = false
}

/// `POST /v2/accounts:revokeToken`.
struct RevokeTokenRequest: Decodable, TenantScopedBody {
    let tenantId: String?
    let providerId: String?
    let tokenType: String?
    let token: String?
    let idToken: String?
}

/// `POST /v2/accounts:revokeToken`'s answer: empty, as Google's is (clients read nothing).
struct EmptyObjectResponse: ResponseEncodable {}
