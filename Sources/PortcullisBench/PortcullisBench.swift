import Dispatch
import Foundation
import PortcullisCore
import PortcullisCrypto
import Synchronization

/// `portcullis-bench scrypt [threads] [seconds]`: the raw scrypt rate of the
/// library Portcullis hashes with, N=2^14 r=8 p=1, on `threads` threads
/// (default: every core). `scripts/bench` uses it as the password anchors.
@main
enum ScryptBenchmark {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.first == "scrypt" else {
            FileHandle.standardError.write(Data("usage: portcullis-bench scrypt [threads] [seconds]\n".utf8))
            exit(64)
        }
        let threads = arguments.dropFirst().first.flatMap(Int.init) ?? ProcessInfo.processInfo.activeProcessorCount
        let seconds = arguments.dropFirst(2).first.flatMap(Double.init) ?? 5
        let hasher = PasswordHasher(parameters: .standard)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let hashes = Atomic<Int>(0)
        let start = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            while DispatchTime.now().uptimeNanoseconds < deadline {
                _ = try? hasher.hash("correct horse battery staple")
                hashes.add(1, ordering: .relaxed)
            }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let rate = Double(hashes.load(ordering: .relaxed)) / elapsed
        FileHandle.standardOutput.write(Data(String(format: "%.2f\n", rate).utf8))
    }
}
