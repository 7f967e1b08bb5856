extension Migration {
    /// When each user's password was last set (`passwordUpdatedAt` of Identity Toolkit's user
    /// resource): sign-up, a change or reset, an import; a rehash on sign-in keeps it. Users
    /// whose password predates this migration show none until it next changes.
    static let passwordUpdatedAt = Migration(
        version: 10, name: "password_updated_at",
        statements: ["ALTER TABLE users ADD COLUMN password_updated_us bigint"])
}
