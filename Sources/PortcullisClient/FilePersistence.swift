public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps each configuration's user in a JSON file of its own, readable by its owner only.
///
/// The file is `<directory>/<persistence key>.json` (one per project, tenant and API key),
/// created with mode 0600 in a 0700 directory, and replaced atomically: written to a
/// temporary file beside it, flushed, then renamed over the old one, so a crash leaves
/// either the old user or the new one, never half of either.
public struct FilePersistence: AuthPersistence {
    /// The directory the files live in.
    public let directory: URL

    /// Files under `directory`; by default `$XDG_STATE_HOME/portcullis` (or
    /// `~/.local/state/portcullis`).
    public init(directory: URL? = nil) {
        self.directory = directory ?? Self.defaultDirectory
    }

    /// `$XDG_STATE_HOME/portcullis`, else `~/.local/state/portcullis`.
    public static var defaultDirectory: URL {
        if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"], !state.isEmpty {
            return URL(fileURLWithPath: state).appendingPathComponent("portcullis")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state/portcullis")
    }

    /// The file `key` is kept in.
    public func file(for key: String) -> URL { directory.appendingPathComponent("\(key).json") }

    /// The user kept under `key`; `nil` when there is no file. A file that does not decode
    /// is treated as absent: the user signs in again.
    public func load(key: String) async throws -> PersistedUser? {
        guard let data = FileManager.default.contents(atPath: file(for: key).path) else { return nil }
        return try? Self.decoder.decode(PersistedUser.self, from: data)
    }

    /// Writes `user` to a 0600 temporary file, flushes it, and renames it over the old file.
    public func save(_ user: PersistedUser, key: String) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let data = try Self.encoder.encode(user)
        let target = file(for: key).path
        let temporary = "\(target).\(UUID().uuidString).tmp"
        // open(2) with the mode, rather than writing then chmod-ing: the token is never
        // readable by others, not even for a moment.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PersistenceError(path: temporary, operation: "create", code: errno) }
        var written = 0
        let failure: Int32? = data.withUnsafeBytes { bytes -> Int32? in
            while written < bytes.count {
                let count = write(descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += count
            }
            return fsync(descriptor) == 0 ? nil : errno
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw PersistenceError(path: temporary, operation: "write", code: failure)
        }
        guard rename(temporary, target) == 0 else {
            let code = errno
            unlink(temporary)
            throw PersistenceError(path: target, operation: "rename", code: code)
        }
    }

    /// Deletes the file of `key`, if there is one.
    public func remove(key: String) async throws {
        guard unlink(file(for: key).path) == 0 || errno == ENOENT else {
            throw PersistenceError(path: file(for: key).path, operation: "remove", code: errno)
        }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}

/// A file of ``FilePersistence`` could not be written or removed.
public struct PersistenceError: Error, CustomStringConvertible {
    /// The file.
    public let path: String
    /// What was being done: `create`, `write`, `rename`, `remove`.
    public let operation: String
    /// The `errno` value.
    public let code: Int32

    /// The operation, the path and the system's reason.
    public var description: String { "cannot \(operation) \(path): \(String(cString: strerror(code)))" }
}
