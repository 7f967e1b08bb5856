// swift-tools-version: 6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "portcullis",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "portcullis", targets: ["portcullis"]),
        .executable(name: "portcullis-bench", targets: ["PortcullisBench"]),
        // For the microbenchmarks in Benchmarks/ (a package of their own).
        .library(name: "PortcullisJSON", targets: ["PortcullisJSON"]),
        // For apps and backends: they speak only the gateway's public HTTP API.
        .library(name: "PortcullisClient", targets: ["PortcullisClient"]),
        .library(name: "PortcullisVerifier", targets: ["PortcullisVerifier"]),
        .library(name: "PortcullisVerifierHummingbird", targets: ["PortcullisVerifierHummingbird"]),
        .executable(name: "portcullis-client", targets: ["portcullis-client"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // bcrypt for imported password hashes (HummingbirdBcrypt only; not the auth middleware).
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(
            url: "https://github.com/apple/swift-configuration.git", from: "1.4.0",
            traits: [.defaults, "YAML", "CommandLineArguments", "Reloading"]
        ),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // Already in Hummingbird's graph; named here for NIOHTTPTypes (the request-timeout handler).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // Already in jwt-kit's graph (same spelling of the URL); base64url for tokens.
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
        // Outbound HTTP: identity providers' JWKS and user-info (webhooks later).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // Already in async-http-client's graph: its TLS configuration (private CAs), and the
        // certificates the fake identity provider's TLS tests make.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        // The JSON, form and base64url toolkit: Google's front end's leniency, and the
        // fast paths package-benchmark measured (Benchmarks/WireCoding).
        .target(
            name: "PortcullisJSON",
            dependencies: [.product(name: "ExtrasBase64", package: "swift-extras-base64")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisCore",
            dependencies: ["PortcullisJSON"],
            swiftSettings: swiftSettings
        ),
        // The system's OpenSSL 3 libcrypto, for RS256 (BENCHMARKS.md, issue 12): found with
        // pkg-config; scripts/test, scripts/bench and scripts/dev install libssl-dev when missing.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // sched_setattr(2) for the hashing threads' scheduling (HashingThreadPriority): Swift
        // cannot call the variadic syscall(2), and glibc before 2.41 has no wrapper.
        .target(name: "CLinuxScheduling"),
        .target(
            name: "PortcullisCrypto",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "CLibCrypto",
                "CLinuxScheduling",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                // Hash latency, into whatever registry the composition root hands in.
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisStore",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The caches' hits, misses and evictions, into whatever registry the composition root hands in.
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisOutbound",
            dependencies: [
                "PortcullisCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisAuth",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisCrypto",
                "PortcullisStore",
                "PortcullisOutbound",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // SHA-256 of federated sign-in nonces.
                .product(name: "Crypto", package: "swift-crypto"),
                // Sign-ins by provider, into whatever registry the composition root hands in.
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisHTTP",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisCrypto",
                "PortcullisStore",
                "PortcullisAuth",
                "PortcullisOutbound",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // SIGTERM and SIGINT start the drain (`PortcullisServer.run`).
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisCrypto",
                "PortcullisStore",
                "PortcullisAuth",
                "PortcullisHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client SDK: the seed's Auth, User, persistence and listeners, over HTTP only.
        .target(
            name: "PortcullisClient",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // ID-token verification for Swift backends, from a tenant's JWKS.
        .target(
            name: "PortcullisVerifier",
            dependencies: [
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The verifier as a Hummingbird middleware (its own product: the verifier alone
        // does not pull in Hummingbird).
        .target(
            name: "PortcullisVerifierHummingbird",
            dependencies: [
                "PortcullisVerifier",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "portcullis-client",
            dependencies: [
                "PortcullisClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PortcullisTestSupport",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisCrypto",
                "PortcullisStore",
                // The fake identity provider: a real HTTP server on loopback with its own RSA key
                // (and, for the outbound client's TLS tests, a certificate from a throwaway CA).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/PortcullisTestSupport",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "PortcullisBench",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisCrypto",
                // swift-crypto's RSA, measured beside libcrypto's (`portcullis-bench rsa`).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisJSONTests",
            dependencies: ["PortcullisJSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisCoreTests",
            dependencies: ["PortcullisCore", "PortcullisJSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisCryptoTests",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisCrypto",
                // The independent peer the RS256 signer is checked against.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisStoreTests",
            dependencies: [
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisStore",
                "PortcullisTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisOutboundTests",
            dependencies: [
                "PortcullisOutbound", "PortcullisCore", "PortcullisJSON", "PortcullisTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisAuthTests",
            dependencies: [
                "PortcullisAuth",
                // Tenant bodies and update masks, read as the routes read them.
                "PortcullisHTTP",
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisCrypto",
                "PortcullisOutbound",
                "PortcullisStore",
                "PortcullisTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisHTTPTests",
            dependencies: [
                "PortcullisHTTP",
                "PortcullisCore",
                "PortcullisJSON",
                "PortcullisAuth",
                "PortcullisStore",
                "PortcullisCrypto",
                "PortcullisTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Signs custom tokens in the tests with the keys the gateway hands out.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisClientTests",
            dependencies: [
                "PortcullisClient",
                "PortcullisTestSupport",
                // The fake identity provider's tokens are built from JSON values.
                "PortcullisJSON",
                // Custom tokens signed with the service-account keys the gateway hands out.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisVerifierTests",
            dependencies: [
                "PortcullisVerifier",
                "PortcullisVerifierHummingbird",
                "PortcullisTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Forged tokens signed with keys of the tests' own.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PortcullisCLITests",
            dependencies: ["PortcullisJSON", "PortcullisStore", "PortcullisTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
