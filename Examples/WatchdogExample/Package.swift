// swift-tools-version:6.1
// The example app's package: it depends on WatchdogKit as an app does, with the `Server` trait
// off (`traits: []`), and so resolves none of the server's packages. An app names this
// repository's URL and a version where this names the repository's folder:
// `.package(url: "<this repository>", from: "<version>", traits: [])`.
//
// Guarded so that `typecheck.sh WatchdogKit <triple> Examples/WatchdogExample`, which compiles
// every Swift file of the folder as the app, passes over the manifest.
#if canImport(PackageDescription)
import PackageDescription

let package = Package(
    name: "WatchdogExample",
    platforms: [.iOS(.v13)],
    dependencies: [
        .package(name: "Watchdog", path: "../..", traits: []),
    ],
    targets: [
        // The app's sources. Xcode builds them into an app; on Linux they compile to nothing
        // (`#if os(iOS)`), which still builds WatchdogKit the way an app resolves it.
        .target(name: "WatchdogExample", dependencies: [.product(name: "WatchdogKit", package: "Watchdog")]),
    ],
    swiftLanguageModes: [.v6]
)
#endif
