extension Migration {
    /// Where a provider revokes a user's token (`revocationUri`, for `accounts:revokeToken`);
    /// `NULL`: the provider's published endpoint (Apple's).
    static let providerRevocationURI = Migration(
        version: 11, name: "provider_revocation_uri",
        statements: ["ALTER TABLE identity_providers ADD COLUMN revocation_uri text"])
}
