extension Migration {
    /// Pages of `users` and `refresh_sessions` are filled to nine tenths, so that the updates
    /// every sign-in and refresh makes (`last_login_us`, `last_refresh_at`, a session's token
    /// hash) find room on the row's own page: a HOT update, which writes no index entry. On a
    /// full page the new version moves to another, and each of the table's indexes gains an
    /// entry (three for `users`), each on a leaf page of its own that the WAL then carries
    /// whole after a checkpoint. Pages written before this migration keep their fill until
    /// rewritten; the change takes no lock that blocks reads or writes.
    static let roomForUpdates = Migration(
        version: 13, name: "room_for_updates",
        statements: [
            "ALTER TABLE users SET (fillfactor = 90)",
            "ALTER TABLE refresh_sessions SET (fillfactor = 90)",
        ])
}
