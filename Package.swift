// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PushCore",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "PushCore", targets: ["PushCore"]),
        .executable(name: "bench", targets: ["bench"]),
    ],
    targets: [
        .target(name: "PushCore"),
        // Counts this thread's heap allocations by wrapping glibc's malloc family; used by
        // `bench` to report allocations per operation and by tests that assert none happen.
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        .executableTarget(
            name: "bench",
            dependencies: ["PushCore", "CAllocationCounter"],
            path: "Benchmarks/bench"
        ),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore", "CAllocationCounter"]),
    ],
    swiftLanguageModes: [.v6]
)
