/// The password rules of a tenant's `passwordPolicyConfig` (Identity Platform's shape).
extension TenantSettings.PasswordPolicy {
    /// The characters that count as non-alphanumeric, as Identity Platform lists them (and
    /// `GET /v2/passwordPolicy` publishes them, so the JS SDK's `validatePassword` counts the same).
    public static let allowedNonAlphanumericCharacters: [Character] = Array(#"^$*.[]{}()?"!@#%&/\,><':;|_~`=+-"#)

    /// `WEAK_PASSWORD : Password should be at least N characters` below the minimum
    /// (6 unless an enforced policy says more); with `ENFORCE`, any other unmet
    /// requirement is `PASSWORD_DOES_NOT_MEET_REQUIREMENTS`.
    public func check(_ password: String) throws(AuthError) {
        let minimum = enforcementState == .enforce ? minPasswordLength : 6
        guard password.count >= minimum else {
            throw AuthError(.weakPassword, detail: "Password should be at least \(minimum) characters")
        }
        guard enforcementState == .enforce else { return }
        var missing: [String] = []
        if password.count > maxPasswordLength { missing.append("Password may contain at most \(maxPasswordLength) characters") }
        if containsLowercaseCharacter, !password.contains(where: \.isLowercase) {
            missing.append("Password must contain a lower case character")
        }
        if containsUppercaseCharacter, !password.contains(where: \.isUppercase) {
            missing.append("Password must contain an upper case character")
        }
        if containsNumericCharacter, !password.contains(where: \.isNumber) { missing.append("Password must contain a numeric character") }
        if containsNonAlphanumericCharacter, !password.contains(where: Self.allowedNonAlphanumericCharacters.contains) {
            missing.append("Password must contain a non-alphanumeric character")
        }
        guard missing.isEmpty else {
            throw AuthError(.passwordDoesNotMeetRequirements, detail: "Missing password requirements: [\(missing.joined(separator: ", "))]")
        }
    }
}
