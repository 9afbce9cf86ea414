// swift-tools-version:6.2.3
import PackageDescription

// The server side (the Notification Hubs client, the emulator, the reference backend and the
// command-line tools) sits behind the `Server` trait. It is on for this repository's own builds; a
// package that wants only the codec turns it off (`traits: []`) and resolves swift-crypto alone.
let server: TargetDependencyCondition = .when(traits: ["Server"])!

func serverProduct(_ name: String, _ package: String) -> Target.Dependency {
    .product(name: name, package: package, condition: server)
}

let package = Package(
    name: "PushCore",
    // The app side (PushClient and the core under it) needs `Duration`: iOS 16 and its year's tvOS,
    // watchOS and visionOS. The non-escaping JSON views back-deploy; the few newer calls are
    // behind `#available`. macOS stays at 15: the server side, which builds on Macs, uses
    // Synchronization throughout, and `platforms` is one floor for every target of the package.
    // scripts/check-apple-shape type-checks the core at these floors.
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "PushJSON", targets: ["PushJSON"]),
        .library(name: "PushAPNs", targets: ["PushAPNs"]),
        .library(name: "PushFCM", targets: ["PushFCM"]),
        .library(name: "PushSAS", targets: ["PushSAS"]),
        .library(name: "PushAPNsTokens", targets: ["PushAPNsTokens"]),
        .library(name: "PushResources", targets: ["PushResources"]),
        .library(name: "RichPushImages", targets: ["RichPushImages"]),
        .library(name: "NotificationHubs", targets: ["NotificationHubs"]),
        .library(name: "APNs", targets: ["APNs"]),
        .library(name: "FCM", targets: ["FCM"]),
        .library(name: "FCMEmulator", targets: ["FCMEmulator"]),
        .library(name: "APNsEmulator", targets: ["APNsEmulator"]),
        .library(name: "HubEmulator", targets: ["HubEmulator"]),
        .library(name: "PushBackend", targets: ["PushBackend"]),
        .library(name: "PushClient", targets: ["PushClient"]),
        .executable(name: "pushcore", targets: ["pushcore"]),
        .executable(name: "hub-emulator", targets: ["hub-emulator"]),
        .executable(name: "apns-emulator", targets: ["apns-emulator"]),
        .executable(name: "fcm-emulator", targets: ["fcm-emulator"]),
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "push-backend", targets: ["push-backend"]),
    ],
    traits: [
        .trait(name: "Server", description: "The hub client, the emulator, the reference backend and the command-line tools."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.1.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.21.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.60.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.0.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
    ],
    targets: [
        // Byte-level helpers every module shares (base64, percent-encoding, hex, decimal digits,
        // constant-time comparison, the Unix clock, HTTP field parsing) and no product exports:
        // none of its types appears in a public API.
        .target(name: "PushInternals"),
        // The core: four modules by concern and an umbrella that re-exports them.
        // Lifetimes: the non-escaping views (`JSONView`, `APNsPayloadView`) declare what they depend on.
        .target(name: "PushJSON", dependencies: ["PushInternals"], swiftSettings: [.enableExperimentalFeature("Lifetimes")]),
        .target(name: "PushAPNs", dependencies: ["PushJSON", "PushInternals"], swiftSettings: [.enableExperimentalFeature("Lifetimes")]),
        // FCM HTTP v1 messages (Android, through Notification Hubs' fcmv1 format or FCM itself):
        // model, writer, size and lint, on the codec alone.
        .target(name: "PushFCM", dependencies: ["PushJSON", "PushInternals"]),
        .target(name: "PushSAS", dependencies: ["PushInternals", .product(name: "Crypto", package: "swift-crypto")]),
        // APNs provider tokens (ES256 JWTs): signing key, cache, verifier.
        .target(
            name: "PushAPNsTokens", dependencies: ["PushJSON", "PushInternals", .product(name: "Crypto", package: "swift-crypto")]),
        // Debian's libxxhash-dev (or Homebrew's xxhash); wrapped by Sources/PushResources/XXH3.swift alone.
        .systemLibrary(
            name: "CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"]), .brew(["xxhash"])]
        ),
        .target(name: "PushResources", dependencies: ["CXXHash", "PushInternals"]),
        .target(name: "PushCore", dependencies: ["PushJSON", "PushAPNs", "PushSAS", "PushResources"]),

        // Images embedded in the binary for rich pushes. Keep them small: `.embedInCode` compile time
        // grows with the bytes (64 KiB ≈ 12 s).
        .target(
            name: "RichPushImages",
            dependencies: ["PushResources"],
            resources: [.embedInCode("Images/pushcore-logo.png"), .embedInCode("Images/sunset.png")]
        ),

        // What the emulators and the server commands share and no product exports: the test hooks'
        // refusals, and usage errors that exit 2.
        .target(
            name: "PushServerSupport",
            dependencies: [
                "PushJSON", serverProduct("Hummingbird", "hummingbird"), serverProduct("HTTPTypes", "swift-http-types"),
                serverProduct("NIOCore", "swift-nio"), serverProduct("ArgumentParser", "swift-argument-parser"),
                serverProduct("Logging", "swift-log"),
            ]
        ),
        // The Notification Hubs client: requests, tag expressions, errors, retries.
        .target(
            name: "NotificationHubs",
            dependencies: [
                "PushJSON",
                "PushAPNs", "PushFCM", "PushSAS", "PushInternals",
                serverProduct("AsyncHTTPClient", "async-http-client"), serverProduct("Logging", "swift-log"),
                serverProduct("NIOCore", "swift-nio"), serverProduct("NIOPosix", "swift-nio"),
                serverProduct("NIOHTTP1", "swift-nio"),
            ]
        ),
        // A local Notification Hubs namespace: the library tests run in-process, and its command.
        .target(
            name: "HubEmulator",
            dependencies: [
                serverProduct("HTTPTypes", "swift-http-types"),
                "PushCore", "PushFCM", "PushInternals", "NotificationHubs", "PushServerSupport", serverProduct("Hummingbird", "hummingbird"),
                serverProduct("HummingbirdCore", "hummingbird"), serverProduct("Logging", "swift-log"), serverProduct("NIOCore", "swift-nio"),
            ]
        ),
        // The HTTP/2 transport the APNs and FCM clients share, and no product exports: a pool of
        // connections to one origin (swift-nio-http2 frames, swift-nio-ssl), streams up to the
        // server's limit, GOAWAY and PING handling, deadlines, an HTTP CONNECT proxy.
        .target(
            name: "HTTP2Transport",
            dependencies: [
                "PushInternals", serverProduct("Logging", "swift-log"), serverProduct("CoreMetrics", "swift-metrics"),
                serverProduct("NIOCore", "swift-nio"), serverProduct("NIOHPACK", "swift-nio-http2"), serverProduct("NIOHTTP1", "swift-nio"),
                serverProduct("NIOHTTP2", "swift-nio-http2"), serverProduct("NIOPosix", "swift-nio"), serverProduct("NIOSSL", "swift-nio-ssl"),
                serverProduct("NIOTLS", "swift-nio"), serverProduct("NIOExtras", "swift-nio-extras"),
            ]
        ),
        // The direct APNs client: HTTP/2 sends with per-device results, over the shared transport.
        .target(
            name: "APNs",
            dependencies: [
                "PushAPNs", "PushAPNsTokens", "PushJSON", "PushInternals", "HTTP2Transport", serverProduct("Logging", "swift-log"),
                serverProduct("CoreMetrics", "swift-metrics"), serverProduct("NIOCore", "swift-nio"), serverProduct("NIOHPACK", "swift-nio-http2"),
                serverProduct("NIOSSL", "swift-nio-ssl"),
            ]
        ),
        // The direct FCM HTTP v1 client: a service account's OAuth 2 access tokens, sends per
        // registration token, topic or condition over the shared HTTP/2 transport.
        .target(
            name: "FCM",
            dependencies: [
                "PushFCM", "PushJSON", "PushInternals", "HTTP2Transport", serverProduct("Logging", "swift-log"),
                serverProduct("CoreMetrics", "swift-metrics"), serverProduct("NIOCore", "swift-nio"), serverProduct("NIOHPACK", "swift-nio-http2"),
                serverProduct("NIOSSL", "swift-nio-ssl"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // A local, verifying APNs provider API over HTTP/2 and TLS, for tests and `apns-emulator`.
        .target(
            name: "APNsEmulator",
            dependencies: [
                serverProduct("HTTPTypes", "swift-http-types"),
                "PushAPNs", "PushAPNsTokens", "PushJSON", "PushInternals", "PushServerSupport", serverProduct("Hummingbird", "hummingbird"),
                serverProduct("HummingbirdCore", "hummingbird"), serverProduct("HummingbirdHTTP2", "hummingbird"),
                serverProduct("Logging", "swift-log"), serverProduct("NIOCore", "swift-nio"),
                serverProduct("ServiceLifecycle", "swift-service-lifecycle"),
                serverProduct("NIOSSL", "swift-nio-ssl"), serverProduct("NIOHTTP2", "swift-nio-http2"),
                serverProduct("NIOHTTPTypesHTTP2", "swift-nio-extras"), serverProduct("X509", "swift-certificates"),
                serverProduct("SwiftASN1", "swift-asn1"), .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // A local, verifying FCM HTTP v1 API and OAuth 2 token endpoint over TLS (HTTP/2 and
        // HTTP/1.1), for tests and `fcm-emulator`; its TLS identity and connection faults are the
        // APNs emulator's.
        .target(
            name: "FCMEmulator",
            dependencies: [
                "FCM", "APNsEmulator", "PushFCM", "PushJSON", "PushInternals", "PushServerSupport", serverProduct("Hummingbird", "hummingbird"),
                serverProduct("HummingbirdCore", "hummingbird"), serverProduct("HummingbirdHTTP2", "hummingbird"),
                serverProduct("HTTPTypes", "swift-http-types"), serverProduct("Logging", "swift-log"), serverProduct("NIOCore", "swift-nio"),
                serverProduct("NIOSSL", "swift-nio-ssl"), serverProduct("ServiceLifecycle", "swift-service-lifecycle"),
            ]
        ),
        // The reference backend of the rich-push and secure-push flows, as a library so that tests run it in-process.
        .target(
            name: "PushBackend",
            dependencies: [
                serverProduct("HTTPTypes", "swift-http-types"),
                "PushCore", "PushFCM", "NotificationHubs", "APNs", "FCM", "PushAPNsTokens", "PushInternals", "RichPushImages",
                .target(name: "HTTP2Transport", condition: server),
                serverProduct("Hummingbird", "hummingbird"), serverProduct("HummingbirdCore", "hummingbird"),
                serverProduct("HummingbirdHTTP2", "hummingbird"), serverProduct("HummingbirdAuth", "hummingbird-auth"),
                serverProduct("NIOHTTP2", "swift-nio-http2"), serverProduct("NIOTLS", "swift-nio"),
                serverProduct("NIOHTTPTypes", "swift-nio-extras"), serverProduct("SQLiteNIO", "sqlite-nio"),
                serverProduct("PostgresNIO", "postgres-nio"), serverProduct("ServiceLifecycle", "swift-service-lifecycle"),
                serverProduct("Metrics", "swift-metrics"), serverProduct("Tracing", "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
                serverProduct("Logging", "swift-log"), serverProduct("NIOCore", "swift-nio"),
                serverProduct("NIOPosix", "swift-nio"), serverProduct("NIOSSL", "swift-nio-ssl"),
                // Apps' identity tokens (OpenID Connect JWTs) and the JWKS they are checked against.
                serverProduct("JWTKit", "jwt-kit"), serverProduct("AsyncHTTPClient", "async-http-client"), serverProduct("NIOHTTP1", "swift-nio"),
                // The server side generated from the contract (Generated/, by scripts/generate-openapi).
                serverProduct("OpenAPIRuntime", "swift-openapi-runtime"), serverProduct("OpenAPIHummingbird", "swift-openapi-hummingbird"),
            ],
            // The API's contract, served at GET /openapi.yaml: whole with APNs delivery, without the
            // operations that need it with a hub (derived by scripts/generate-openapi).
            resources: [.embedInCode("openapi.yaml"), .embedInCode("Generated/openapi-hub.yaml")]
        ),

        // The app side of the flows: push parsing, the backend client (generated from the
        // backend's OpenAPI document by scripts/generate-openapi), verified ranged image downloads.
        // Its transport is URLSession on Apple platforms and AsyncHTTPClient on Linux, where
        // URLSession cannot stream a body; never the server's packages, never libxxhash.
        .target(
            name: "PushClient",
            dependencies: [
                "PushJSON", "PushAPNs", "PushInternals", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(
                    name: "OpenAPIURLSession", package: "swift-openapi-urlsession",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS, .macCatalyst])),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                // Its failures, told apart (PushClientError).
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
            ]
        ),

        .executableTarget(
            name: "pushcore",
            dependencies: [
                "PushJSON", serverProduct("NIOHTTP1", "swift-nio"),
                "PushCore", "PushFCM", "PushAPNsTokens", "PushInternals", "PushClient", .target(name: "APNs", condition: server),
                .target(name: "HTTP2Transport", condition: server), .target(name: "FCM", condition: server),
                serverProduct("AsyncHTTPClient", "async-http-client"), serverProduct("NIOCore", "swift-nio"),
                serverProduct("ArgumentParser", "swift-argument-parser"),
                serverProduct("Logging", "swift-log"), serverProduct("NIOSSL", "swift-nio-ssl"),
            ]
        ),
        .executableTarget(
            name: "hub-emulator",
            dependencies: [
                "HubEmulator", "PushCore", "PushServerSupport", serverProduct("ArgumentParser", "swift-argument-parser"),
                serverProduct("Logging", "swift-log"),
            ]
        ),
        .executableTarget(
            name: "apns-emulator",
            dependencies: [
                "APNsEmulator", "PushAPNsTokens", "PushServerSupport", serverProduct("ArgumentParser", "swift-argument-parser"),
                serverProduct("Logging", "swift-log"),
                serverProduct("NIOSSL", "swift-nio-ssl"),
            ]
        ),
        .executableTarget(
            name: "fcm-emulator",
            dependencies: [
                "FCMEmulator", "FCM", "APNsEmulator", "PushServerSupport", serverProduct("ArgumentParser", "swift-argument-parser"),
                serverProduct("Logging", "swift-log"),
            ]
        ),
        .executableTarget(
            name: "push-backend",
            dependencies: [
                "PushAPNs", "PushJSON", "PushSAS", serverProduct("NIOCore", "swift-nio"), serverProduct("UnixSignals", "swift-service-lifecycle"),
                "PushBackend", "HubEmulator", "APNsEmulator", "APNs", "PushAPNsTokens", "PushCore", "PushServerSupport",
                "FCM", "FCMEmulator", serverProduct("ArgumentParser", "swift-argument-parser"), serverProduct("Logging", "swift-log"),
                serverProduct("Hummingbird", "hummingbird"), serverProduct("Metrics", "swift-metrics"),
                serverProduct("Prometheus", "swift-prometheus"),
                serverProduct("ServiceLifecycle", "swift-service-lifecycle"), serverProduct("NIOSSL", "swift-nio-ssl"),
                serverProduct("Configuration", "swift-configuration"), serverProduct("SystemPackage", "swift-system"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // libFuzzer targets (scripts/fuzz builds them with -sanitize=fuzzer,address); built normally, a replay tool.
        .executableTarget(name: "pushcore-fuzz", dependencies: ["PushCore"], path: "Fuzz/pushcore-fuzz"),

        // Counts this thread's heap allocations by wrapping glibc's malloc family; used by `bench`
        // to report allocations per operation and by the allocation tests, the only tests that link it.
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        // The bench's anchor: simdjson's DOM parser (Debian's libsimdjson-dev, Homebrew's simdjson)
        // behind a few C functions. Not through pkg-config: SwiftPM refuses the -D flag simdjson's
        // .pc file carries (the shim defines it), and warns on every build.
        .target(
            name: "SimdjsonAnchor",
            path: "Benchmarks/SimdjsonAnchor",
            cxxSettings: [.unsafeFlags(["-I/opt/homebrew/include"], .when(platforms: [.macOS]))],
            linkerSettings: [.linkedLibrary("simdjson"), .unsafeFlags(["-L/opt/homebrew/lib"], .when(platforms: [.macOS]))]
        ),
        .executableTarget(
            name: "bench",
            dependencies: [
                "PushAPNs",
                "PushCore", "PushFCM", "PushAPNsTokens", "CXXHash", "CAllocationCounter", "SimdjsonAnchor",
                .product(name: "Crypto", package: "swift-crypto"),
                // apns.send and fcm.send: each client against its emulator, in one process.
                .target(name: "APNs", condition: server), .target(name: "APNsEmulator", condition: server),
                .target(name: "FCM", condition: server), .target(name: "FCMEmulator", condition: server),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                serverProduct("Logging", "swift-log"), serverProduct("NIOSSL", "swift-nio-ssl"),
            ],
            path: "Benchmarks/bench"
        ),

        // `make load`'s baseline: a bare Hummingbird route answering push-backend's bodies.
        .executableTarget(
            name: "bare-hummingbird",
            dependencies: ["PushResources", "RichPushImages", serverProduct("Hummingbird", "hummingbird"), serverProduct("Logging", "swift-log")],
            path: "Benchmarks/bare-hummingbird"
        ),

        // One test target per module. The CLI and backend tests run the binaries `swift build` put
        // beside the test bundle (`make test` builds them first); no test target links an executable.
        .target(name: "PushTestSupport", path: "Tests/PushTestSupport"),
        .target(
            name: "APNsTestSupport",
            dependencies: [
                "APNs", "APNsEmulator", "PushAPNs", "PushAPNsTokens", .product(name: "Crypto", package: "swift-crypto"),
                serverProduct("ServiceLifecycle", "swift-service-lifecycle"), serverProduct("Logging", "swift-log"),
                serverProduct("AsyncHTTPClient", "async-http-client"), serverProduct("NIOCore", "swift-nio"),
                serverProduct("NIOPosix", "swift-nio"), serverProduct("NIOSSL", "swift-nio-ssl"),
            ], path: "Tests/APNsTestSupport"),
        .target(
            name: "HubTestSupport",
            dependencies: [
                "HubEmulator", "NotificationHubs", "PushSAS", serverProduct("ServiceLifecycle", "swift-service-lifecycle"),
                serverProduct("Logging", "swift-log"),
            ], path: "Tests/HubTestSupport"),
        .testTarget(name: "PushJSONTests", dependencies: ["PushJSON", "PushTestSupport"]),
        // Records/ is read from the source tree by path.
        .testTarget(name: "PushAPNsTests", dependencies: ["PushJSON", "PushAPNs", "PushTestSupport"], exclude: ["Records"]),
        .testTarget(name: "PushFCMTests", dependencies: ["PushFCM", "PushJSON"]),
        .testTarget(
            name: "PushSASTests",
            dependencies: ["PushSAS", "PushTestSupport", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Fixtures/ is read from the source tree by path.
        .testTarget(
            name: "PushAPNsTokensTests",
            dependencies: ["PushAPNsTokens", .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "PushInternalsTests", dependencies: ["PushInternals"]),
        .testTarget(
            name: "PushClientTests",
            dependencies: [
                "PushClient", "PushJSON", "PushAPNs", "PushTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"), .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        .testTarget(name: "PushResourcesTests", dependencies: ["PushResources", "RichPushImages", "PushTestSupport"]),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore", "RichPushImages", "PushTestSupport"]),
        .testTarget(name: "AllocationTests", dependencies: ["PushCore", "PushFCM", "CAllocationCounter", "PushTestSupport"]),
        .testTarget(
            name: "NotificationHubsTests", dependencies: ["PushAPNs", "PushFCM", "PushJSON", "PushSAS", "NotificationHubs", "PushTestSupport"]),
        .testTarget(
            name: "HubEmulatorTests",
            dependencies: [
                "PushFCM", "PushInternals", serverProduct("HTTPTypes", "swift-http-types"),
                "HubEmulator", "NotificationHubs", "PushCore", "PushTestSupport", "HubTestSupport",
                serverProduct("AsyncHTTPClient", "async-http-client"), serverProduct("NIOCore", "swift-nio"), serverProduct("NIOHTTP1", "swift-nio"),
                serverProduct("Hummingbird", "hummingbird"), serverProduct("HummingbirdTesting", "hummingbird"),
            ],
            // Recordings/ is read from the source tree by path.
            exclude: ["Recordings"]
        ),
        .testTarget(
            name: "PushBackendTests",
            dependencies: [
                serverProduct("NIOHTTP1", "swift-nio"),
                "PushBackend", "PushClient", .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"), "HubEmulator", "NotificationHubs", "PushCore", "PushFCM", "RichPushImages",
                "PushTestSupport", "HubTestSupport",
                "APNs", "APNsEmulator", "FCM", "FCMEmulator", "PushAPNsTokens", .product(name: "Crypto", package: "swift-crypto"),
                serverProduct("ServiceLifecycle", "swift-service-lifecycle"), serverProduct("PostgresNIO", "postgres-nio"),
                serverProduct("NIOSSL", "swift-nio-ssl"),
                serverProduct("AsyncHTTPClient", "async-http-client"), serverProduct("NIOCore", "swift-nio"),
                serverProduct("Hummingbird", "hummingbird"), serverProduct("HummingbirdTesting", "hummingbird"),
                serverProduct("SQLiteNIO", "sqlite-nio"), serverProduct("Logging", "swift-log"),
                serverProduct("Tracing", "swift-distributed-tracing"), serverProduct("InMemoryTracing", "swift-distributed-tracing"),
                serverProduct("MetricsTestKit", "swift-metrics"), serverProduct("JWTKit", "jwt-kit"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "APNsTests",
            dependencies: [
                "PushJSON", serverProduct("Metrics", "swift-metrics"), serverProduct("NIOHTTP1", "swift-nio"),
                "APNs", "APNsEmulator", "APNsTestSupport", "HTTP2Transport", "PushAPNs", "PushAPNsTokens", "PushCore", "PushTestSupport",
                .product(name: "Crypto", package: "swift-crypto"), serverProduct("ServiceLifecycle", "swift-service-lifecycle"),
                serverProduct("Logging", "swift-log"),
                serverProduct("AsyncHTTPClient", "async-http-client"),
                serverProduct("NIOCore", "swift-nio"), serverProduct("NIOSSL", "swift-nio-ssl"),
                serverProduct("NIOPosix", "swift-nio"), serverProduct("NIOHTTP2", "swift-nio-http2"),
                serverProduct("MetricsTestKit", "swift-metrics"),
            ]
        ),
        // The APNs emulator itself: its frames, its command.
        .testTarget(
            name: "APNsEmulatorTests",
            dependencies: [
                "APNs", "APNsEmulator", "APNsTestSupport", "PushAPNsTokens", "PushCore", "PushTestSupport",
                .product(name: "Crypto", package: "swift-crypto"), serverProduct("AsyncHTTPClient", "async-http-client"),
                serverProduct("NIOCore", "swift-nio"), serverProduct("NIOSSL", "swift-nio-ssl"), serverProduct("NIOPosix", "swift-nio"),
                serverProduct("NIOHTTP1", "swift-nio"), serverProduct("NIOHTTP2", "swift-nio-http2"), serverProduct("NIOHPACK", "swift-nio-http2"),
            ]
        ),
        .testTarget(
            name: "FCMTests",
            dependencies: [
                "FCM", "FCMEmulator", "APNsEmulator", "APNsTestSupport", "PushFCM", "PushTestSupport",
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                serverProduct("ServiceLifecycle", "swift-service-lifecycle"), serverProduct("Logging", "swift-log"),
                serverProduct("NIOCore", "swift-nio"), serverProduct("NIOSSL", "swift-nio-ssl"),
                serverProduct("AsyncHTTPClient", "async-http-client"), serverProduct("MetricsTestKit", "swift-metrics"),
                serverProduct("NIOPosix", "swift-nio"), serverProduct("NIOHTTP1", "swift-nio"),
            ]
        ),
        .testTarget(name: "pushcoreTests", dependencies: ["PushCore", "PushTestSupport"]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)

// Every Swift target of the package: `any` spelled out, members visible only from modules a file
// imports, and imports internal unless a file says `public import` (its public API shows the
// module's types).
for target in package.targets where [.regular, .executable, .test].contains(target.type) {
    guard !["CAllocationCounter", "SimdjsonAnchor"].contains(target.name) else { continue }
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("InternalImportsByDefault"),
        ]
}

// `make docs` builds the DocC catalogues (the core modules, and the products an adopter types
// against: PushFCM, APNs, NotificationHubs, PushClient) with swift-docc-plugin. The plugin
// is a dependency only then, so nothing that depends on PushCore ever resolves it.
if Context.environment["PUSHCORE_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"))
}

// CI builds this package's own code with warnings as errors (`.ci/run` sets PUSHCORE_WARNINGS_AS_ERRORS=1);
// dependencies are never affected. Not the test targets: Swift Testing's macros expand to code that
// this toolchain warns about ("'@const' value should be initialized with a compile-time value").
if Context.environment["PUSHCORE_WARNINGS_AS_ERRORS"] == "1" {
    for target in package.targets where [.regular, .executable].contains(target.type) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-warnings-as-errors"])]
    }
}
