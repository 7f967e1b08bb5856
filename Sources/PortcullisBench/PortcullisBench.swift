import Dispatch
import Foundation
import PortcullisCore
import PortcullisCrypto
import PortcullisJSON
import Synchronization

/// `portcullis-bench`: the raw rates of the libraries Portcullis builds on, measured
/// by the same code the daemon calls, so `scripts/bench` can print the daemon's
/// figures beside what the cryptography alone allows on the same machine.
///
///     portcullis-bench scrypt [threads] [seconds]   scrypt N=2^14 r=8 p=1 hashes/s
///     portcullis-bench scrypt-paced PAUSE COUNT      COUNT such hashes one at a time, PAUSE seconds
///                                                     apart: their p50 and p99 in milliseconds
///     portcullis-bench sign ALG [threads] [seconds] ID tokens signed/s (RS256, ES256, EdDSA)
///     portcullis-bench rsa LIB OP [threads] [seconds] RSA-2048 RS256 signatures made (OP sign) or
///                                                     checked (OP verify)/s by LIB libcrypto or swift-crypto
///     portcullis-bench custom-token KEY_FILE CLIENT_EMAIL KID UID [TENANT]
///                                                     prints one custom token (``CustomTokenMinting``)
///
/// `threads` defaults to every core, `seconds` to 5. The rate is printed alone.
@main
enum PortcullisBench {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let mode = arguments.first else { usage() }
        arguments.removeFirst()
        let work: @Sendable () -> Void
        switch mode {
        case "scrypt":
            work = hashOnce
        case "scrypt-paced":
            guard arguments.count == 2, let pause = Double(arguments[0]), let count = Int(arguments[1]), count > 0 else { usage() }
            let times = paced(pause: pause, count: count, hashOnce).sorted()
            // Nearest rank, as `scripts/bench` reads its rows' p99 (of 100: the second slowest).
            let p99 = times[(count * 99 + 99) / 100 - 1]
            let median = count % 2 == 1 ? times[count / 2] : (times[count / 2 - 1] + times[count / 2]) / 2
            FileHandle.standardOutput.write(Data(String(format: "%.2f %.2f\n", median, p99).utf8))
            return
        case "sign":
            guard let name = arguments.first, let algorithm = TenantSettings.SigningAlgorithm(rawValue: name),
                let key = try? SigningKey.generate(algorithm), let keyring = try? await Keyring(active: key, keys: [key])
            else { usage() }
            arguments.removeFirst()
            let claims = sampleClaims()
            let now = SystemClock().now().seconds
            work = { _ = try? keyring.sign(claims, now: now) }
        case "custom-token":
            guard let token = CustomTokenMinting.mint(arguments) else { usage() }
            FileHandle.standardOutput.write(Data((token + "\n").utf8))
            return
        case "rsa":
            guard arguments.count >= 2,
                let rsa = try? RSAComparison.work(library: arguments[0], operation: arguments[1], claims: sampleClaims())
            else { usage() }
            arguments.removeFirst(2)
            work = rsa
        default:
            usage()
        }
        let threads = arguments.first.flatMap(Int.init) ?? ProcessInfo.processInfo.activeProcessorCount
        let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 5
        let rate = measure(threads: threads, seconds: seconds, work)
        FileHandle.standardOutput.write(Data(String(format: "%.2f\n", rate).utf8))
    }

    /// Runs `work` in a loop on `threads` threads for `seconds`; returns runs per second.
    static func measure(threads: Int, seconds: Double, _ work: @escaping @Sendable () -> Void) -> Double {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let runs = Atomic<Int>(0)
        let start = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            while DispatchTime.now().uptimeNanoseconds < deadline {
                work()
                runs.add(1, ordering: .relaxed)
            }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(runs.load(ordering: .relaxed)) / elapsed
    }

    /// One password hash of the daemon's default parameters.
    static let hashOnce: @Sendable () -> Void = {
        _ = try? PasswordHasher(parameters: .standard).hash("correct horse battery staple")
    }

    /// Runs `work` `count` times on this thread, sleeping `pause` seconds before each, as a
    /// client signing in now and then would have it run; returns each run's milliseconds.
    static func paced(pause: Double, count: Int, _ work: () -> Void) -> [Double] {
        (0..<count).map { _ in
            Thread.sleep(forTimeInterval: pause)
            let start = DispatchTime.now().uptimeNanoseconds
            work()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        }
    }

    /// The claims of a typical ID token, so the rate includes encoding as the daemon does it.
    static func sampleClaims() -> JSONValue {
        let now = Int64(Date().timeIntervalSince1970)
        return IDTokenClaims(
            issuer: "http://127.0.0.1:8080/bench/tenants/t-bench", audience: "bench", subject: SecretToken.random(byteCount: 21),
            issuedAt: now, expiresAt: now + 3600, authTime: now, email: "bench@example.com", emailVerified: false,
            signInProvider: "password", identities: ["email": ["bench@example.com"]], tenantId: "t-bench"
        ).json
    }

    static func usage() -> Never {
        FileHandle.standardError.write(
            Data(
                """
                usage: portcullis-bench scrypt [threads] [seconds] | scrypt-paced PAUSE COUNT
                       | sign RS256|ES256|EdDSA [threads] [seconds]
                       | rsa libcrypto|swift-crypto sign|verify [threads] [seconds]
                       | custom-token KEY_FILE CLIENT_EMAIL KID UID [TENANT]

                """.utf8))
        exit(64)
    }
}
