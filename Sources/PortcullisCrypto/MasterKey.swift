import Crypto
public import Foundation
import PortcullisCore
import PortcullisJSON

/// The key-encryption key: seals private keys at rest with AES-256-GCM.
///
/// Each sealed value is bound to a context string (tenant and key id) as
/// additional authenticated data, so a sealed key copied to another row does
/// not open.
public struct MasterKey: Sendable {
    private let key: SymmetricKey

    /// Errors loading or using the master key.
    public enum Failure: Error, Equatable {
        /// The material is not 32 bytes (raw, 64 hex digits or base64).
        case invalidLength
        /// A sealed value does not open under this key and context.
        case cannotOpen
    }

    /// A key from exactly 32 raw bytes.
    public init(bytes: some Collection<UInt8>) throws(Failure) {
        guard bytes.count == 32 else { throw .invalidLength }
        key = SymmetricKey(data: Array(bytes))
    }

    /// Reads key material as operators write it: 32 raw bytes, or 64 hex digits,
    /// or base64 of 32 bytes (a trailing newline is ignored).
    public init(material: [UInt8]) throws(Failure) {
        if material.count == 32 {
            try self.init(bytes: material)
            return
        }
        let text = String(decoding: material, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 64, let bytes = Self.hex(text) {
            try self.init(bytes: bytes)
        } else if let data = Data(base64Encoded: text), data.count == 32 {
            try self.init(bytes: data)
        } else if let bytes = Base64URL.decode(text), bytes.count == 32 {
            try self.init(bytes: bytes)
        } else {
            throw .invalidLength
        }
    }

    /// A fresh random key (tests and `portcullis dev`).
    public static func generate() -> MasterKey {
        // safe: SymmetricKey(size: .bits256) is 32 bytes by construction.
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return (try? MasterKey(bytes: bytes)) ?? MasterKey(key: SymmetricKey(size: .bits256))
    }

    private init(key: SymmetricKey) {
        self.key = key
    }

    /// The key as 64 hex digits, for writing a dev key file.
    public var hexString: String {
        key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }

    /// Encrypts and authenticates `plaintext`, bound to `context`.
    public func seal(_ plaintext: some DataProtocol, context: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw Failure.cannotOpen }
        return Array(combined)
    }

    /// Decrypts what ``seal(_:context:)`` produced for the same context.
    public func open(_ sealed: some DataProtocol, context: String) throws(Failure) -> [UInt8] {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return Array(try AES.GCM.open(box, using: key, authenticating: Data(context.utf8)))
        } catch {
            throw .cannotOpen
        }
    }

    /// A key for another purpose, derived with HKDF-SHA256 (the master key itself only seals).
    func derivedKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(purpose.utf8), outputByteCount: 32)
    }

    private static func hex(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
