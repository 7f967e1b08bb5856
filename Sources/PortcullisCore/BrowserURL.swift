import Foundation
import PortcullisJSON

/// A URL as browsers read it: the WHATWG URL Standard's basic URL parser for the special
/// schemes `http` and `https`, without a base URL, and the URL's serialisation (`href`).
///
/// The gateway redirects to URLs it was handed (an email action's `continueUrl`), so the
/// host it checks must be the host a browser goes to. Foundation's `URLComponents` follows
/// RFC 3986 and disagrees with browsers on exactly the inputs an attacker picks:
/// `https://attacker.example\@localhost/` has the host `localhost` for `URLComponents` and
/// `attacker.example` for a browser, which reads `\` as `/` in these schemes. This parser
/// takes the standard's steps instead: leading and trailing C0 controls and spaces are
/// stripped and ASCII tabs and newlines removed anywhere; the scheme is case-insensitive;
/// any run of `/` and `\` may follow it; the authority ends at the first `/`, `\`, `?` or
/// `#`, and userinfo is everything before its *last* `@`; the host is percent-decoded,
/// mapped to ASCII (``Host/init(_:)``) and read as IPv4 when it ends in a number; a default
/// port is dropped; `.` and `..` segments (`%2e` too) are resolved; and the path, query and
/// fragment are percent-encoded each with its own set. ``serialized`` is what a browser
/// makes of the input, and it has one reading whatever base URL it is later resolved
/// against, so it is what the gateway writes back — never the input text.
///
/// Where its answer could differ from a browser's, the parser refuses (`nil`) rather than
/// guesses:
/// - input longer than ``maximumLength`` UTF-8 bytes;
/// - any other scheme, and relative references (there is no base URL to resolve against);
/// - IPv6 hosts (`[…]`), which it does not parse;
/// - non-ASCII hosts outside the subset of UTS #46 that ``Host/init(_:)`` maps exactly.
///
/// The path's percent-encode set is the current standard's, which includes `^`; browsers
/// that predate that change leave `^` bare, and the two spellings name the same resource.
public struct BrowserURL: Sendable, Hashable {
    /// Longer input (in UTF-8 bytes) is refused before it is read.
    public static let maximumLength = 2048

    /// `http` or `https`, lower-case.
    public let scheme: String
    /// The username, percent-encoded; empty when there is none.
    public let username: String
    /// The password, percent-encoded; empty when there is none.
    public let password: String
    /// Whether the authority had userinfo at all — an `@`, even with nothing before it
    /// (`https://@host/`, which serialises without it).
    public let hasUserinfo: Bool
    /// The host; never empty.
    public let host: Host
    /// The port; `nil` when absent or the scheme's default (80 for `http`, 443 for `https`).
    public let port: Int?
    /// The path with dot segments resolved, percent-encoded; it always starts with `/`.
    public let path: String
    /// The query without its `?`, percent-encoded; `nil` when there is no `?`.
    public let query: String?
    /// The fragment without its `#`, percent-encoded; `nil` when there is no `#`.
    public let fragment: String?

    /// The URL as the standard serialises it (a browser's `href`): ASCII only.
    public var serialized: String {
        var output = scheme + "://"
        if !username.isEmpty || !password.isEmpty {
            output += username
            if !password.isEmpty { output += ":" + password }
            output += "@"
        }
        output += host.description
        if let port { output += ":\(port)" }
        output += path
        if let query { output += "?" + query }
        if let fragment { output += "#" + fragment }
        return output
    }

    /// Parses `text` as a browser parses an absolute `http` or `https` URL; `nil` when a
    /// browser would fail to, or where this parser would not be sure to agree with one
    /// (see ``BrowserURL``).
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count <= Self.maximumLength else { return nil }
        let scalars = Array(text.unicodeScalars)
        guard let first = scalars.firstIndex(where: { $0.value > 0x20 }),
            let last = scalars.lastIndex(where: { $0.value > 0x20 })
        else { return nil }
        let input = scalars[first...last].filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }

        // The scheme: an ASCII letter, then letters, digits, `+`, `-` or `.`, up to `:`.
        // Without one the input is relative, and there is no base URL to resolve it against.
        guard let colon = input.firstIndex(of: ":"), colon > 0, input[0].isASCIILetter,
            input[..<colon].allSatisfy(\.isSchemeCodePoint)
        else { return nil }
        let scheme = String(String.UnicodeScalarView(input[..<colon])).lowercased()
        guard let defaultPort = ["http": 80, "https": 443][scheme] else { return nil }
        self.scheme = scheme

        // Special schemes skip every `/` and `\` after the colon: `https:\\host`, `https:host`
        // and `https:////host` all name `host`.
        var start = colon + 1
        while start < input.count, input[start].isSlash { start += 1 }
        let authorityEnd = input[start...].firstIndex(where: \.endsAuthority) ?? input.count

        // Userinfo runs to the *last* `@`: the host is what follows it.
        var hostStart = start
        if let at = input[start..<authorityEnd].lastIndex(of: "@") {
            let userinfo = input[start..<at]
            let separator = userinfo.firstIndex(of: ":")
            username = Self.encoded(userinfo[..<(separator ?? at)], .userinfo)
            password = separator.map { Self.encoded(userinfo[($0 + 1)...], .userinfo) } ?? ""
            hasUserinfo = true
            hostStart = at + 1
        } else {
            username = ""
            password = ""
            hasUserinfo = false
        }

        // `[` opens an IPv6 address, which this parser refuses; anywhere else it is a
        // forbidden host code point, so a browser refuses the URL too.
        let hostAndPort = input[hostStart..<authorityEnd]
        guard !hostAndPort.contains("[") else { return nil }
        let portSeparator = hostAndPort.firstIndex(of: ":")
        let hostText = hostAndPort[..<(portSeparator ?? authorityEnd)]
        guard !hostText.isEmpty, let host = Host(String(String.UnicodeScalarView(hostText))) else { return nil }
        self.host = host

        if let portSeparator {
            let digits = hostAndPort[(portSeparator + 1)...]
            guard digits.allSatisfy(\.isASCIIDigit) else { return nil }
            // Leading zeros are allowed, so their count does not bound the value: drop them.
            let significant = digits.drop { $0 == "0" }
            guard significant.count <= 5 else { return nil }
            let value = Int(String(String.UnicodeScalarView(significant))) ?? 0
            guard value <= 65535 else { return nil }
            port = digits.isEmpty || value == defaultPort ? nil : value
        } else {
            port = nil
        }

        var pathStart = authorityEnd
        if pathStart < input.count, input[pathStart].isSlash { pathStart += 1 }
        let pathEnd = input[pathStart...].firstIndex { $0 == "?" || $0 == "#" } ?? input.count
        path = Self.resolvedPath(input[pathStart..<pathEnd])

        var fragmentStart = pathEnd
        if pathEnd < input.count, input[pathEnd] == "?" {
            let queryEnd = input[pathEnd...].firstIndex(of: "#") ?? input.count
            query = Self.encoded(input[(pathEnd + 1)..<queryEnd], .specialQuery)
            fragmentStart = queryEnd
        } else {
            query = nil
        }
        fragment = fragmentStart < input.count ? Self.encoded(input[(fragmentStart + 1)...], .fragment) : nil
    }

    /// The standard's path state: `/` and `\` separate segments, `.` segments vanish, `..`
    /// segments remove the one before (never past the root), and a trailing `.` or `..`
    /// leaves an empty last segment (`/a/..` is `/`).
    private static func resolvedPath(_ text: ArraySlice<Unicode.Scalar>) -> String {
        let raw = text.split(omittingEmptySubsequences: false, whereSeparator: \.isSlash)
        var segments: [String] = []
        for (offset, scalars) in raw.enumerated() {
            let segment = encoded(scalars, .path)
            let isLast = offset == raw.count - 1
            switch segment.lowercased() {
            case "..", ".%2e", "%2e.", "%2e%2e":
                if !segments.isEmpty { segments.removeLast() }
                if isLast { segments.append("") }
            case ".", "%2e":
                if isLast { segments.append("") }
            default:
                segments.append(segment)
            }
        }
        return segments.map { "/" + $0 }.joined()
    }

    /// The standard's percent-encode sets, as far as these schemes use them.
    private enum EncodeSet {
        case userinfo, path, specialQuery, fragment

        /// Whether `scalar` is written percent-encoded: C0 controls, DEL and everything
        /// beyond ASCII always are, and each set adds ASCII of its own.
        func contains(_ scalar: Unicode.Scalar) -> Bool {
            guard scalar.value > 0x1F, scalar.value < 0x7F else { return true }
            let extra: String =
                switch self {
                case .fragment: " \"<>`"
                case .specialQuery: " \"#<>'"
                case .path: " \"#<>?^`{}"
                case .userinfo: " \"#<>?^`{}/:;=@[\\]|"
                }
            return extra.unicodeScalars.contains(scalar)
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".unicodeScalars)

    /// UTF-8 percent-encodes the members of `set` in `scalars`; a `%` already there stays.
    private static func encoded(_ scalars: some Sequence<Unicode.Scalar>, _ set: EncodeSet) -> String {
        var output = String.UnicodeScalarView()
        for scalar in scalars {
            guard set.contains(scalar) else {
                output.append(scalar)
                continue
            }
            for byte in scalar.utf8 {
                output.append("%")
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(output)
    }
}

extension BrowserURL {
    /// A URL's host: a domain in ASCII, or an IPv4 address.
    public enum Host: Sendable, Hashable, CustomStringConvertible {
        /// A domain, lower-case ASCII; non-ASCII labels in their `xn--` Punycode form.
        case domain(String)
        /// An IPv4 address, as one 32-bit number (`127.0.0.1` is `0x7F00_0001`).
        case ipv4(UInt32)

        /// Parses a host as the standard's host parser does for `http` and `https`.
        ///
        /// The text is percent-decoded (`%61` is `a`, `%2E` a dot), must be UTF-8, and is
        /// mapped to ASCII as UTS #46 does (IDNA, non-transitional): ASCII lower-cased; the
        /// ideographic full stops `。`, `．` and `｡` read as `.`; other code points lower-cased
        /// and NFKC-normalised; each non-ASCII label written `xn--` + Punycode. The result
        /// must not contain a forbidden domain code point (C0 controls, space, `#`, `%`,
        /// `/`, `:`, `<`, `>`, `?`, `@`, `[`, `\`, `]`, `^`, `|`, DEL). When its last label is
        /// a number (decimal, `0x` hex or `0` octal, as in `0x7f.1` or `2130706433`), it is
        /// an IPv4 address of one to four parts, like `inet_aton`.
        ///
        /// UTS #46's mapping table is data this module does not carry, so non-ASCII is
        /// accepted only where lower-casing and NFKC agree with that table: in a label with
        /// non-ASCII, every code point after mapping must be a lower-case ASCII letter, digit
        /// or hyphen, or a letter, mark or decimal digit that NFKC case folding leaves alone
        /// and that is not default-ignorable (which rules out code points the table maps
        /// differently, such as `ß`, `ς` and the soft hyphen); the label must not start with a
        /// mark. Right-to-left scripts are refused, rather than checked against RFC 5893's
        /// bidi rules, and so are joiners. An `xn--` label must be the canonical Punycode of a
        /// label this parser accepts. `nil` for IPv6 (`[…]`) and for anything else refused.
        public init?(_ text: some StringProtocol) {
            guard !text.isEmpty, text.utf8.count <= BrowserURL.maximumLength, text.first != "[",
                let domain = String(validating: Self.percentDecoded(Array(text.utf8)), as: UTF8.self),
                let ascii = IDNA.toASCII(domain), !ascii.isEmpty,
                !ascii.unicodeScalars.contains(where: \.isForbiddenInDomain)
            else { return nil }
            guard Self.endsInNumber(ascii) else {
                self = .domain(ascii)
                return
            }
            guard let address = Self.ipv4(ascii) else { return nil }
            self = .ipv4(address)
        }

        /// The host as a URL writes it: the domain, or dotted-decimal IPv4.
        public var description: String {
            switch self {
            case .domain(let name): name
            case .ipv4(let address): (0..<4).map { String(address >> (24 - 8 * $0) & 0xFF) }.joined(separator: ".")
            }
        }

        /// `%XX` escapes become their bytes; a `%` not followed by two hex digits stays.
        private static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count)
            var index = 0
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                    let high = bytes[index + 1].hexDigitValue, let low = bytes[index + 2].hexDigitValue
                {
                    output.append(UInt8(high << 4 | low))
                    index += 3
                } else {
                    output.append(bytes[index])
                    index += 1
                }
            }
            return output
        }

        /// Whether the last label (ignoring one trailing dot) is a number, making the host
        /// an IPv4 address (or a failure): all digits, or `0x` and hex digits.
        private static func endsInNumber(_ host: String) -> Bool {
            var labels = host.split(separator: ".", omittingEmptySubsequences: false)
            if labels.last?.isEmpty == true { labels.removeLast() }
            guard let last = labels.last else { return false }
            if !last.isEmpty && last.unicodeScalars.allSatisfy(\.isASCIIDigit) { return true }
            return ipv4Number(last) != nil
        }

        /// The standard's IPv4 parser: one to four numbers, the last filling the bytes the
        /// others leave (`127.1` is `127.0.0.1`, `2130706433` is `127.0.0.1` too).
        private static func ipv4(_ host: String) -> UInt32? {
            var parts = host.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
            guard parts.count <= 4 else { return nil }
            var numbers: [UInt64] = []
            for part in parts {
                guard let number = ipv4Number(part) else { return nil }
                numbers.append(number)
            }
            guard let last = numbers.popLast(), numbers.allSatisfy({ $0 <= 255 }),
                last < UInt64(1) << (8 * (4 - numbers.count))
            else { return nil }
            var address = last
            for (index, number) in numbers.enumerated() {
                address += number << (8 * (3 - index))
            }
            return UInt32(truncatingIfNeeded: address)
        }

        /// One IPv4 part: decimal, `0x` hexadecimal, or octal when it starts with `0`;
        /// `0x` alone is 0. Values beyond 32 bits are kept at 2³², which every caller refuses.
        private static func ipv4Number(_ part: Substring) -> UInt64? {
            guard !part.isEmpty else { return nil }
            var digits = part.utf8[...]
            var radix: UInt64 = 10
            if digits.count >= 2, digits.starts(with: "0x".utf8) || digits.starts(with: "0X".utf8) {
                digits = digits.dropFirst(2)
                radix = 16
            } else if digits.count >= 2, digits.first == UInt8(ascii: "0") {
                digits = digits.dropFirst()
                radix = 8
            }
            var value: UInt64 = 0
            for byte in digits {
                guard let digit = byte.hexDigitValue.map(UInt64.init), digit < radix else { return nil }
                value = min(value * radix + digit, 1 << 32)
            }
            return value
        }
    }
}

/// UTS #46 ToASCII as the URL Standard runs it (non-transitional, `CheckHyphens`,
/// `UseSTD3ASCIIRules` and `VerifyDnsLength` off, `CheckBidi` and `CheckJoiners` on), within
/// the subset ``BrowserURL/Host/init(_:)`` describes.
private enum IDNA {
    /// The domain in ASCII, or `nil` when it is outside the subset or invalid.
    static func toASCII(_ domain: String) -> String? {
        var mapped = String.UnicodeScalarView()
        for scalar in domain.unicodeScalars {
            if scalar.isASCII {
                mapped.append(scalar.isASCIIUppercase ? Unicode.Scalar(scalar.value + 0x20) ?? scalar : scalar)
            } else if scalar == "\u{3002}" || scalar == "\u{FF0E}" || scalar == "\u{FF61}" {
                mapped.append(".")
            } else {
                // NFKC twice around lower-casing: `ᴬ` (a modifier letter) only becomes `A`,
                // and so `a`, through compatibility mapping.
                let image = String(scalar).precomposedStringWithCompatibilityMapping.lowercased()
                    .precomposedStringWithCompatibilityMapping
                // A mapping that yields a dot, a space or other ASCII punctuation (`⒈` → `1.`)
                // is one the table may not share.
                guard image.unicodeScalars.allSatisfy({ !$0.isASCII || $0.isLowercaseLDH }) else { return nil }
                mapped.append(contentsOf: image.unicodeScalars)
            }
        }
        let normalized = String(mapped).precomposedStringWithCanonicalMapping
        var labels: [String] = []
        for label in normalized.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false) {
            let label = Array(label)
            if label.allSatisfy(\.isASCII) {
                if label.starts(with: "xn--".unicodeScalars) {
                    // Only the canonical encoding of a label this parser accepts: then the
                    // browser's own check of the label, where it makes one, agrees.
                    let encoded = Array(label.dropFirst(4))
                    guard let decoded = Punycode.decode(encoded), !decoded.allSatisfy(\.isASCII), isAccepted(decoded),
                        Punycode.encode(decoded).map({ Array($0.unicodeScalars) }) == encoded
                    else { return nil }
                }
                labels.append(String(String.UnicodeScalarView(label)))
            } else {
                guard isAccepted(label), let encoded = Punycode.encode(label) else { return nil }
                labels.append("xn--" + encoded)
            }
        }
        return labels.joined(separator: ".")
    }

    /// Whether a label with non-ASCII code points is valid and already mapped (so UTS #46
    /// leaves it as it is), as far as this parser can tell without the mapping table.
    private static func isAccepted(_ label: [Unicode.Scalar]) -> Bool {
        guard let first = label.first, !first.isMark, !label.starts(with: "xn--".unicodeScalars),
            String(String.UnicodeScalarView(label)).precomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual(label)
        else { return false }
        return label.allSatisfy { scalar in
            if scalar.isASCII { return scalar.isLowercaseLDH }
            let properties = scalar.properties
            switch properties.generalCategory {
            case .lowercaseLetter, .uppercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
                .spacingMark, .enclosingMark, .decimalNumber:
                return !properties.changesWhenNFKCCaseFolded && !properties.isDefaultIgnorableCodePoint
                    && !scalar.isRightToLeftBlock
            default:
                return false
            }
        }
    }
}

/// Punycode (RFC 3492), the encoding of IDNA's `xn--` labels. Every intermediate value must
/// fit 32 bits, as the RFC's overflow handling requires; a label that would not is refused.
private enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 0x80
    private static let maximum = Int(UInt32.max)
    /// More digits than a 32-bit value can need (each digit divides it by at least 10).
    private static let maximumDigits = 12

    /// The Punycode of `label` (without `xn--`).
    static func encode(_ label: [Unicode.Scalar]) -> String? {
        var output = String.UnicodeScalarView(label.filter(\.isASCII))
        let basicCount = output.count
        if basicCount > 0 { output.append("-") }
        var (n, delta, bias, handled) = (initialN, 0, initialBias, basicCount)
        // Each pass encodes every occurrence of the next larger code point, so at least one.
        while handled < label.count {
            guard let next = label.lazy.map({ Int($0.value) }).filter({ $0 >= n }).min() else { return nil }
            delta += (next - n) * (handled + 1)
            n = next
            for scalar in label {
                let value = Int(scalar.value)
                if value < n { delta += 1 }
                guard delta <= maximum else { return nil }
                guard value == n else { continue }
                var q = delta
                var k = base
                for _ in 0..<maximumDigits {
                    let t = threshold(k, bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                guard q < base else { return nil }
                output.append(digit(q))
                bias = adapt(delta, handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    /// The code points `encoded` (without `xn--`) stands for; `nil` when it is not Punycode.
    static func decode(_ encoded: [Unicode.Scalar]) -> [Unicode.Scalar]? {
        let delimiter = encoded.lastIndex(of: "-") ?? 0
        var output = Array(encoded[..<delimiter])
        var position = delimiter > 0 ? delimiter + 1 : 0
        var (n, i, bias) = (initialN, 0, initialBias)
        // Each pass reads at least one character.
        while position < encoded.count {
            let previous = i
            var (weight, k, complete) = (1, base, false)
            for _ in 0..<maximumDigits {
                guard position < encoded.count, let digit = value(of: encoded[position]) else { return nil }
                position += 1
                i += digit * weight
                let t = threshold(k, bias)
                guard i <= maximum else { return nil }
                if digit < t {
                    complete = true
                    break
                }
                weight *= base - t
                guard weight <= maximum else { return nil }
                k += base
            }
            guard complete else { return nil }
            bias = adapt(i - previous, output.count + 1, first: previous == 0)
            n += i / (output.count + 1)
            i %= output.count + 1
            guard n <= maximum, let scalar = Unicode.Scalar(UInt32(n)), !scalar.isASCII else { return nil }
            output.insert(scalar, at: i)
            i += 1
        }
        return output
    }

    private static func threshold(_ k: Int, _ bias: Int) -> Int {
        k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias
    }

    private static func adapt(_ delta: Int, _ count: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        // `delta` is below 2³² and shrinks 35-fold a pass: at most seven passes.
        while delta > (base - tMin) * tMax / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    private static func digit(_ value: Int) -> Unicode.Scalar {
        Unicode.Scalar(UInt8(value < 26 ? 0x61 + value : 0x30 + value - 26))
    }

    private static func value(of digit: Unicode.Scalar) -> Int? {
        switch digit {
        case "a"..."z": Int(digit.value) - 0x61
        case "A"..."Z": Int(digit.value) - 0x41
        case "0"..."9": Int(digit.value) - 0x30 + 26
        default: nil
        }
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
    fileprivate var isASCIIUppercase: Bool { ("A"..."Z").contains(self) }
    fileprivate var isSchemeCodePoint: Bool { isASCIILetter || isASCIIDigit || self == "+" || self == "-" || self == "." }
    /// `/`, or `\`, which special URLs read as `/`.
    fileprivate var isSlash: Bool { self == "/" || self == "\\" }
    fileprivate var endsAuthority: Bool { isSlash || self == "?" || self == "#" }
    fileprivate var isLowercaseLDH: Bool { ("a"..."z").contains(self) || isASCIIDigit || self == "-" }

    fileprivate var isMark: Bool {
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    /// The standard's forbidden domain code points.
    fileprivate var isForbiddenInDomain: Bool {
        value <= 0x20 || value == 0x7F || "#%/:<>?@[\\]^|".unicodeScalars.contains(self)
    }

    /// The blocks of right-to-left scripts and Arabic digits (bidi classes R, AL and AN):
    /// Hebrew to Arabic Extended, their presentation forms, and the historic and
    /// mathematical right-to-left ranges of the supplementary planes.
    fileprivate var isRightToLeftBlock: Bool {
        switch value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: true
        default: false
        }
    }
}
