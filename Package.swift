// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PushCore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "RichPushImages", targets: ["RichPushImages"]),
        .library(name: "NotificationHubs", targets: ["NotificationHubs"]),
        .executable(name: "pushcore", targets: ["pushcore"]),
        .executable(name: "hub-emulator", targets: ["hub-emulator"]),
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "push-backend", targets: ["push-backend"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.21.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.60.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.20.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
        .target(name: "PushCore", dependencies: ["CXXHash", .product(name: "Crypto", package: "swift-crypto")]),
        // Debian's libxxhash-dev (or Homebrew's xxhash); wrapped by Sources/PushCore/Streaming/XXH3.swift alone.
        .systemLibrary(
            name: "CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"]), .brew(["xxhash"])]
        ),
        .executableTarget(
            name: "pushcore",
            dependencies: ["PushCore", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // libFuzzer targets (scripts/fuzz builds them with -sanitize=fuzzer,address); built normally, a replay tool.
        .executableTarget(name: "pushcore-fuzz", dependencies: ["PushCore"], path: "Fuzz/pushcore-fuzz"),
        // The Notification Hubs client: requests, tag expressions, errors, retries.
        .target(
            name: "NotificationHubs",
            dependencies: [
                "PushCore", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // A local Notification Hubs namespace: the library tests run in-process, and its command.
        .target(
            name: "HubEmulator",
            dependencies: [
                "PushCore", "NotificationHubs", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "hub-emulator",
            dependencies: [
                "HubEmulator", "PushCore", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The reference backend of the rich-push and secure-push flows, as a library so that tests run it in-process.
        .target(
            name: "PushBackend",
            dependencies: [
                "PushCore", "NotificationHubs", "HubEmulator", "RichPushImages",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"), .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "push-backend",
            dependencies: [
                "PushBackend", "PushCore", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Images embedded in the binary for rich pushes. Keep them small: `.embedInCode` compile time
        // grows with the bytes (64 KiB ≈ 12 s).
        .target(
            name: "RichPushImages",
            dependencies: ["PushCore"],
            resources: [.embedInCode("Images/pushcore-logo.png"), .embedInCode("Images/sunset.png")]
        ),
        // Counts this thread's heap allocations by wrapping glibc's malloc family; used by
        // `bench` to report allocations per operation and by tests that assert none happen.
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        .executableTarget(
            name: "bench",
            dependencies: ["PushCore", "CXXHash", "CAllocationCounter", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/bench"
        ),
        // Depends on `pushcore`, `hub-emulator` and `push-backend` so that `swift test` builds the binaries the tests run.
        .testTarget(
            name: "PushCoreTests",
            dependencies: [
                "PushCore", "NotificationHubs", "HubEmulator", "RichPushImages", "CAllocationCounter", "PushBackend", "pushcore", "hub-emulator", "push-backend",
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
