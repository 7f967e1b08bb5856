public import Foundation
public import PortcullisJSON

/// One user of an import (`accounts:batchCreate`, `portcullis users import`), validated:
/// the account as it will be stored, and its password hash as the source system made it.
public struct ImportedUser: Sendable, Equatable {
    /// The account; `hasPassword` is set when a hash came with it.
    public var user: User
    /// The hash as the source made it (decoded from base64).
    public var passwordHash: [UInt8]?
    /// A hash in Portcullis' own stored form (`portcullisPasswordHash`, what `portcullis users
    /// export` writes): stored as it is, whatever the request's hash configuration.
    public var storedPasswordHash: String?
    /// The hash's salt (decoded from base64), empty when none came.
    public var salt: [UInt8]
}

/// How an import reads its users (the shape of Identity Toolkit's `UploadAccount` users and
/// of `firebase auth:export` records): the per-user rules, and the request's limits.
public enum UserImportPolicy {
    /// The most users one `accounts:batchCreate` may carry.
    public static let maximumUsersPerRequest = 1000

    /// Reads one user record; the error is that user's (reported by index, the others go on).
    ///
    /// `passwordHash` and `salt` are base64 in either alphabet; `createdAt`/`lastLoginAt` are
    /// milliseconds (numbers or strings; `lastSignedInAt` is export's name for the latter);
    /// `customAttributes` is a JSON object in a string; `providerUserInfo[]` entries need
    /// `providerId` and `rawId` of a federated provider. Phone numbers and second factors
    /// are refused: Portcullis has neither.
    public static func parse(_ record: JSONValue, tenantId: String?, now: Date) throws(AuthError) -> ImportedUser {
        try AuthError.reading { try user(record, tenantId: tenantId, now: now) }
    }

    private static func user(_ record: JSONValue, tenantId: String?, now: Date) throws -> ImportedUser {
        let reader = try JSONValue.Reader(record.camelCasedKeys())
        guard let uid = try reader.string("localId"), !uid.isEmpty, uid.count <= 128 else {
            throw AuthError(.invalidLocalId)
        }
        if try reader.string("phoneNumber").map({ !$0.isEmpty }) == true {
            throw AuthError(.invalidArgument, detail: "phone numbers are not supported")
        }
        var user = User(tenantId: tenantId, uid: uid, createdAt: now)
        if let email = try reader.string("email"), !email.isEmpty { user.email = try EmailAddress.validate(email) }
        user.emailVerified = try reader.bool("emailVerified") ?? false
        user.disabled = try reader.bool("disabled") ?? false
        if let name = try reader.string("displayName") { user.displayName = try UserProfile.validate(displayName: name) }
        if let photo = try reader.string("photoUrl") { user.photoURL = try UserProfile.validate(photoURL: photo) }
        if let claims = try reader.string("customAttributes") { user.customAttributes = try CustomClaims.parse(claims) }
        if let created = try milliseconds(reader, "createdAt") { user.createdAt = created.date }
        user.lastLoginAt = try milliseconds(reader, "lastLoginAt")
        if user.lastLoginAt == nil { user.lastLoginAt = try milliseconds(reader, "lastSignedInAt") }
        for (index, entry) in (try reader.array("providerUserInfo") ?? []).enumerated() {
            let provider = try JSONValue.Reader(entry, path: "providerUserInfo[\(index)]")
            // `firebase auth:export` lists the password too; that link follows the email and hash.
            if try provider.string("providerId") == ProviderLink.password { continue }
            guard let providerId = try provider.string("providerId"),
                IdentityProvider.isFederated(providerId),
                let rawId = try provider.string("rawId"), !rawId.isEmpty, rawId.utf8.count <= 512
            else {
                throw AuthError(.invalidProviderId, detail: "providerUserInfo[\(index)] needs a federated providerId and a rawId")
            }
            user.providers.append(
                ProviderLink(
                    providerId: providerId, federatedId: rawId,
                    email: try provider.string("email").map { text throws(AuthError) in try EmailAddress.validate(text) },
                    displayName: try provider.string("displayName").map { text throws(AuthError) in
                        try UserProfile.validate(displayName: text)
                    },
                    photoURL: try provider.string("photoUrl").map { text throws(AuthError) in try UserProfile.validate(photoURL: text) }))
        }
        var passwordHash: [UInt8]?
        if let text = try reader.string("passwordHash"), !text.isEmpty {
            guard let bytes = Base64URL.decodeEitherAlphabet(text), !bytes.isEmpty else {
                throw AuthError(.invalidPasswordHash, detail: "passwordHash must be base64")
            }
            passwordHash = bytes
            user.hasPassword = true
        }
        let saltText = try reader.string("salt") ?? ""
        guard let salt = saltText.isEmpty ? [] : Base64URL.decodeEitherAlphabet(saltText) else {
            throw AuthError(.invalidPasswordHash, detail: "salt must be base64")
        }
        let stored = try reader.string("portcullisPasswordHash").flatMap { $0.isEmpty ? nil : $0 }
        if stored != nil {
            guard passwordHash == nil else {
                throw AuthError(.invalidPasswordHash, detail: "passwordHash and portcullisPasswordHash exclude each other")
            }
            user.hasPassword = true
        }
        // Set by the import, as far as this account's password history here goes.
        if user.hasPassword { user.passwordUpdatedAt = Timestamp(now) }
        user.syncPasswordLink()
        return ImportedUser(user: user, passwordHash: passwordHash, storedPasswordHash: stored, salt: salt)
    }

    private static func milliseconds(_ reader: JSONValue.Reader, _ key: String) throws -> Timestamp? {
        guard let text = try reader.string(key) else { return nil }
        guard let value = Int64(text), value >= 0, value < 253_402_300_800_000 else {
            throw AuthError(.invalidArgument, detail: "\(key) must be milliseconds since 1970")
        }
        return Timestamp(microseconds: value * 1000)
    }

    /// The hash configuration of an import request (Identity Toolkit's `UploadAccount` fields:
    /// `hashAlgorithm`, `signerKey` and `saltSeparator` in base64, `rounds`, `memoryCost`,
    /// `cpuMemCost`, `blockSize`, `parallelization`, `dkLen`, `passwordHashOrder`; also the
    /// Firebase console's `algorithm`, `base64_signer_key`, `base64_salt_separator`,
    /// `mem_cost`); `nil` when it names no algorithm.
    public static func hashConfig(of body: JSONValue) throws(AuthError) -> PasswordHashConfig? {
        try AuthError.reading { try readHashConfig(body) }
    }

    private static func readHashConfig(_ body: JSONValue) throws -> PasswordHashConfig? {
        let reader = try JSONValue.Reader(body.camelCasedKeys())
        // The Firebase console's hash parameters use other names: accepted too.
        func string(_ keys: String...) throws -> String? {
            for key in keys { if let value = try reader.string(key) { return value } }
            return nil
        }
        guard let algorithm = try string("hashAlgorithm", "algorithm"), !algorithm.isEmpty else { return nil }
        func bytes(_ key: String, _ code: AuthError.Code) throws -> [UInt8]? {
            guard let text = try string(key, "base64" + key.prefix(1).uppercased() + key.dropFirst()) else { return nil }
            guard let decoded = Base64URL.decodeEitherAlphabet(text) else { throw AuthError(code, detail: "\(key) must be base64") }
            return decoded
        }
        return try PasswordHashConfig(
            hashAlgorithm: algorithm, signerKey: bytes("signerKey", .invalidHashKey),
            saltSeparator: bytes("saltSeparator", .invalidHashSaltSeparator), rounds: reader.int("rounds"),
            memoryCost: string("memoryCost", "memCost").flatMap { Int($0) }, cpuMemCost: reader.int("cpuMemCost"),
            blockSize: reader.int("blockSize"),
            parallelization: reader.int("parallelization"), dkLen: reader.int("dkLen"),
            passwordHashOrder: reader.string("passwordHashOrder"))
    }

    /// One account as `portcullis users export` writes it: `firebase auth:export`'s record
    /// (`createdAt` and `lastSignedInAt` in milliseconds as strings, `customAttributes` as a
    /// JSON string, the federated `providerUserInfo`), with the stored hash in
    /// `portcullisPasswordHash`, which ``parse(_:tenantId:now:)`` takes back as it is.
    public static func exportRecord(_ user: User, passwordHash: String?) -> JSONValue {
        var record: [String: JSONValue] = [
            "localId": .string(user.uid), "emailVerified": .bool(user.emailVerified), "disabled": .bool(user.disabled),
            "createdAt": .string(String(Timestamp(user.createdAt).milliseconds)),
        ]
        if let email = user.email { record["email"] = .string(email) }
        if let name = user.displayName { record["displayName"] = .string(name) }
        if let photo = user.photoURL { record["photoUrl"] = .string(photo) }
        if let lastLogin = user.lastLoginAt { record["lastSignedInAt"] = .string(String(lastLogin.milliseconds)) }
        if !user.customAttributes.isEmpty {
            record["customAttributes"] = .string(JSONValue.object(user.customAttributes).serialized())
        }
        if let passwordHash { record["portcullisPasswordHash"] = .string(passwordHash) }
        let federated = user.providers.filter { $0.providerId != ProviderLink.password }
        if !federated.isEmpty {
            record["providerUserInfo"] = .array(
                federated.map { link in
                    var entry: [String: JSONValue] = ["providerId": .string(link.providerId), "rawId": .string(link.federatedId)]
                    if let email = link.email { entry["email"] = .string(email) }
                    if let name = link.displayName { entry["displayName"] = .string(name) }
                    if let photo = link.photoURL { entry["photoUrl"] = .string(photo) }
                    return .object(entry)
                })
        }
        return .object(record)
    }

    /// The per-user errors of users that repeat an earlier user's uid or email (the later
    /// one is refused), by index.
    public static func duplicates(in users: [(index: Int, user: ImportedUser)]) -> [Int: AuthError] {
        var uids = Set<String>()
        var emails = Set<String>()
        var identities = Set<String>()
        var errors: [Int: AuthError] = [:]
        for (index, imported) in users {
            let user = imported.user
            let links = user.providers.filter { $0.providerId != ProviderLink.password }.map { "\($0.providerId)\u{0}\($0.federatedId)" }
            if uids.contains(user.uid) {
                errors[index] = AuthError(.duplicateLocalId)
            } else if let email = user.email, emails.contains(email) {
                errors[index] = AuthError(.emailExists)
            } else if links.contains(where: identities.contains) {
                errors[index] = AuthError(.federatedUserIdAlreadyLinked)
            } else {
                uids.insert(user.uid)
                if let email = user.email { emails.insert(email) }
                identities.formUnion(links)
            }
        }
        return errors
    }
}
