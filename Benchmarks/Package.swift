// swift-tools-version: 6.1
// Microbenchmarks (ordo-one/package-benchmark), in a package of their own so the daemon
// never depends on the benchmark harness. Run: `cd Benchmarks && swift package benchmark`.
import PackageDescription

let package = Package(
    name: "portcullis-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "portcullis", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "WireCoding",
            dependencies: [
                .product(name: "PortcullisJSON", package: "portcullis"),
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Benchmarks/WireCoding",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        )
    ]
)
