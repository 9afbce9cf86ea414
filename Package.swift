// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PushCore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PushCore", targets: ["PushCore"]),
        .executable(name: "bench", targets: ["bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .target(name: "PushCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // Counts this thread's heap allocations by wrapping glibc's malloc family; used by
        // `bench` to report allocations per operation and by tests that assert none happen.
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        .executableTarget(
            name: "bench",
            dependencies: ["PushCore", "CAllocationCounter", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/bench"
        ),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore", "CAllocationCounter"]),
    ],
    swiftLanguageModes: [.v6]
)
