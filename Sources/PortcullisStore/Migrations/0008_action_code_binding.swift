extension Migration {
    /// Action codes bound to the account they were issued for (DESIGN.md §1): a code works
    /// only while the account's email is still the one it had when the code was issued
    /// (`account_email`; for an email change, the old address) and while no revocation
    /// came after it (`created_us` against `users.valid_since_us`).
    ///
    /// Outstanding codes of the kinds issued for the account's own email take it as their
    /// account email; an email change issued before this migration has no record of the old
    /// address, so it no longer works (it lives an hour by default: ask for a new one).
    static let actionCodeBinding = Migration(
        version: 8, name: "action_code_binding",
        statements: [
            "ALTER TABLE action_codes ADD COLUMN account_email text",
            "UPDATE action_codes SET account_email = email WHERE kind <> 'VERIFY_AND_CHANGE_EMAIL'",
        ])
}
