// swift-tools-version:6.1
import PackageDescription

// The commit `watchdogd --version` names: deploy/deb/build.sh and deploy/Dockerfile pass
// `WATCHDOG_BUILD_COMMIT=$(git rev-parse HEAD)`. Read from the environment only: SwiftPM caches
// the evaluated manifest by its text and environment, so `Context.gitInformation` would go stale
// after the next commit. Anything but a plain word is not passed on.
let buildCommit = Context.environment["WATCHDOG_BUILD_COMMIT"].flatMap { commit in
    commit.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._+-".contains($0)) } && !commit.isEmpty && commit.count <= 64 ? commit : nil
}

/// A product of a package only the server needs: resolved only with the `Server` trait, so an app
/// that depends on WatchdogKit with `traits: []` resolves none of them (docs/watchdogkit.md).
func server(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Server"]))
}

let package = Package(
    name: "Watchdog",
    // iOS 13: WatchdogKit's deployment target, the first with UIScene (the driver follows the
    // window's scene, not UIApplication) and with Swift concurrency back-deployed (docs/watchdogkit.md).
    platforms: [.macOS(.v15), .iOS(.v13)],
    products: [
        .executable(name: "watchdogd", targets: ["watchdogd"]),
        .library(name: "WatchdogWire", targets: ["WatchdogWire"]),
        .library(name: "WatchdogKit", targets: ["WatchdogKit"]),
        .executable(name: "watchdog-simulator", targets: ["watchdog-simulator"]),
    ],
    // `Server`, on by default: the server's targets get their packages (README's `swift run
    // watchdogd` and `swift test` as they are). Apps turn it off (`traits: []`) and get none.
    traits: [
        .trait(name: "Server", description: "watchdogd, its tools and tests, with the packages they need (GRDB, swift-crypto, …)"),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // 4.x: jwt-kit needs it (swift-certificates takes 3.12.3 up to 6).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // App Attest: X.509 chains to Apple's App Attestation root and the DER inside them.
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // OpenID Connect sign-in: the ID token's signature (RS256/ES256 over the IdP's JWKS).
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // `swift package generate-documentation --target WatchdogKit`. No target uses it, so a
        // package that depends on this one does not resolve it (measured: docs/watchdogkit.md).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // The system zlib, by its module map's `link "z"` alone: no pkg-config, which on a Mac
        // with Homebrew's zlib would point an iOS build at the macOS libz.dylib.
        .systemLibrary(name: "CZlib"),
        .target(name: "Gzip", dependencies: ["CZlib"]),
        // Stored bodies: Debian's libzstd, and the dictionaries they are compressed with (C
        // arrays; deploy/zstd-dictionary.sh says how v1 was made).
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        .target(name: "ZstdDictionaries"),
        .target(name: "CBuildInfo", cSettings: buildCommit.map { [.define("WATCHDOG_BUILD_COMMIT", to: "\"\($0)\"")] } ?? []),
        // Webhook delivery over Debian's libcurl (libcurl4-openssl-dev's header): a C shim, since
        // curl_easy_setopt is variadic. libcurl is loaded with dlopen on the first delivery,
        // not linked: a daemon without hooks never maps it (docs/performance.md, memory).
        .target(name: "CWebhookPost"),
        // libpq (libpq-dev's header), loaded with dlopen when a PostgreSQL store opens, not
        // linked: a daemon on SQLite never maps it nor the OpenSSL it pulls in.
        .target(name: "CLibPQ"),
        // libpq behind a small synchronous API (the store's protocol is synchronous).
        .target(name: "PostgresClient", dependencies: ["CLibPQ", "Locking"]),
        .target(name: "WatchdogWire"),
        .target(name: "Locking"),
        // The client library apps link: plain Swift on the wire model, Foundation and the
        // system zlib (gzip uploads); UIKit and SwiftUI glue behind `#if os(iOS)`. Neither it nor
        // the targets it depends on may use a package the `Server` trait brings.
        // PrivacyInfo.xcprivacy: the SDK's own privacy manifest (required-reason APIs, collected
        // data), which Xcode merges into the app's privacy report.
        .target(name: "WatchdogKit", dependencies: ["WatchdogWire", "Gzip", "Locking"], resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "WatchdogSimulation", dependencies: ["WatchdogKit", "WatchdogWire"]),
        .executableTarget(
            name: "watchdog-simulator",
            // WatchdogTesting: the test CA that stands in for Apple's App Attest (--attest-ca).
            dependencies: ["WatchdogSimulation", "WatchdogTesting", server("ArgumentParser", "swift-argument-parser")]
        ),
        .target(
            name: "WatchdogHTTP",
            dependencies: ["CMicroHTTPD", "Gzip", "Locking", server("Logging", "swift-log")]
        ),
        .target(
            name: "WatchdogStore",
            dependencies: [
                "WatchdogWire", "Gzip", "CZstd", "ZstdDictionaries", "Locking", "PostgresClient",
                server("GRDB", "GRDB.swift"), server("GRDBSQLite", "GRDB.swift"),
            ]
        ),
        .target(
            name: "WatchdogServer",
            dependencies: [
                "WatchdogWire", "WatchdogHTTP", "WatchdogStore", "Locking", "CWebhookPost",
                server("Logging", "swift-log"),
                server("Prometheus", "swift-prometheus"),
                server("Crypto", "swift-crypto"),
                server("X509", "swift-certificates"),
                server("SwiftASN1", "swift-asn1"),
                server("JWTKit", "jwt-kit"),
            ]
        ),
        // The router in memory over a real store in a temp dir, for tests (like HummingbirdTesting).
        .target(
            name: "WatchdogTesting",
            dependencies: ["WatchdogServer", "WatchdogHTTP", "WatchdogStore", "WatchdogKit", "WatchdogWire", "Gzip", "Locking", server("Logging", "swift-log"),
                           server("Crypto", "swift-crypto"), server("GRDB", "GRDB.swift"),
                           server("X509", "swift-certificates"), server("SwiftASN1", "swift-asn1")]
        ),
        .executableTarget(
            name: "watchdogd",
            dependencies: [
                "WatchdogServer", "WatchdogStore", "Locking", "CBuildInfo", "CWebhookPost",
                server("ArgumentParser", "swift-argument-parser"),
                server("Logging", "swift-log"),
            ]
        ),
        // A program that prints what hashing one credential costs (not a timed test).
        .executableTarget(name: "hash-benchmark", dependencies: ["WatchdogServer"], path: "Tests/Benchmarks/hash"),
        // A simulation of daily looks at A/A and regressed release pairs: how often each
        // interval calls a difference that is not there, and how soon it sees one that is.
        .executableTarget(name: "sequential-simulation", dependencies: ["WatchdogServer", "WatchdogWire"], path: "Tests/Benchmarks/sequential"),
        // A program that prints what checking an App Attest assertion costs ingest (not a timed test).
        .executableTarget(name: "attest-benchmark", dependencies: ["WatchdogTesting", "WatchdogStore", "WatchdogWire"], path: "Tests/Benchmarks/attest"),
        // A program that prints what one watchdog tick costs the main thread, for a 500-view tree
        // (plain Swift: the driver's walk and the agent's tick), beside a yardstick (not a timed test).
        .executableTarget(name: "tick-benchmark", dependencies: ["WatchdogKit"], path: "Tests/Benchmarks/tick"),
        // What the test targets share: a clock tests move by hand.
        .target(name: "TestSupport", dependencies: ["Locking"], path: "Tests/TestSupport"),
        .testTarget(
            name: "WatchdogWireTests",
            dependencies: ["WatchdogWire"]
        ),
        .testTarget(
            name: "WatchdogKitTests",
            dependencies: ["WatchdogKit", "WatchdogWire", "WatchdogHTTP", "TestSupport", "Locking", "Gzip"]
        ),
        // Routes, auth, validation, stats and config through `WatchdogTesting`: in memory, no process.
        .testTarget(
            name: "WatchdogServerTests",
            dependencies: ["WatchdogServer", "WatchdogHTTP", "WatchdogStore", "WatchdogTesting", "WatchdogWire", "WatchdogKit", "Locking", "Gzip", "PostgresClient",
                           server("GRDB", "GRDB.swift"), server("Crypto", "swift-crypto"), server("JWTKit", "jwt-kit")]
        ),
        // Starts the real `watchdogd` binary (built by `swift test` with every product) on
        // port 0 with a temporary data dir and talks HTTP to it: what needs the process
        // (transport and framing, signals, kill -9, the CLI, backup, the browser).
        .testTarget(
            name: "WatchdogdTests",
            dependencies: ["Gzip", "Locking", "TestSupport", "WatchdogWire", "WatchdogKit", "WatchdogSimulation", "WatchdogTesting", "PostgresClient", "watchdogd",
                           server("GRDB", "GRDB.swift")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
