/// Limits on the profile fields users and admins set. The profile is copied into every
/// ID token, and a token must stay small enough for the headers proxies and verifiers
/// accept (commonly 8 KiB): with these bounds and custom claims' 1,000 bytes, a token
/// stays under 5 KiB.
public enum UserProfile {
    /// The longest `displayName`, in characters.
    public static let maximumDisplayNameCharacters = 256
    /// The longest `photoUrl`, in UTF-8 bytes.
    public static let maximumPhotoURLBytes = 2048

    /// `INVALID_ARGUMENT` for a name over 256 characters or 1,024 bytes.
    public static func validate(displayName: String) throws(AuthError) -> String {
        guard displayName.count <= maximumDisplayNameCharacters, displayName.utf8.count <= 4 * maximumDisplayNameCharacters
        else {
            throw AuthError(.invalidArgument, detail: "displayName must be at most \(maximumDisplayNameCharacters) characters")
        }
        return displayName
    }

    /// `INVALID_ARGUMENT` for a URL over 2,048 bytes.
    public static func validate(photoURL: String) throws(AuthError) -> String {
        guard photoURL.utf8.count <= maximumPhotoURLBytes else {
            throw AuthError(.invalidArgument, detail: "photoUrl must be at most \(maximumPhotoURLBytes) bytes")
        }
        return photoURL
    }
}
