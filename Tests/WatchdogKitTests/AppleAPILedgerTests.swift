import Foundation
import Testing

/// `docs/ios-api.md` against WatchdogKit's Apple-only code (which cannot be compiled here):
/// every Apple symbol that code names is in the ledger, with the minimum iOS version Apple's
/// documentation gives, and none is used below that version without `#available`.
@Suite struct AppleAPILedgerTests {
    static let root = PrivacyManifestTests.packageRoot

    /// The package's iOS deployment target, from Package.swift (`.iOS(.v13)`).
    static func deploymentTarget() throws -> Double {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let match = try #require(manifest.firstMatch(of: /\.iOS\(\.v([0-9]+)(?:_([0-9]+))?\)/))
        return Double("\(match.1).\(match.2 ?? "0")") ?? 0
    }

    /// Every Swift file under `folder` (the package's sources by default), comments and string text blanked.
    static func sources(in folder: String = "Sources") throws -> [(name: String, code: String)] {
        let folder = root.appendingPathComponent(folder)
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { (String($0.path.dropFirst(root.path.count + 1)), SwiftSource.code(of: try String(contentsOf: $0, encoding: .utf8))) }
    }

    /// Names compiled on Linux: every identifier in code outside Apple-only blocks, anywhere in
    /// the sources (Swift's keywords and standard library, Foundation, the project's own names).
    static func portableNames(_ sources: [(name: String, code: String)]) -> Set<String> {
        var names: Set<String> = []
        for (_, code) in sources {
            let apple = AppleAPILedger.appleOnlyCode(code)
            let appleLines = Set(apple.split(separator: "\n", omittingEmptySubsequences: false).enumerated().filter { !$0.element.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.offset + 1 })
            for token in SwiftSource.tokens(in: code) where !appleLines.contains(token.line) { names.insert(token.name) }
        }
        return names
    }

    @Test func everyAppleSymbolInUIKitAndSwiftUICodeIsInTheLedgerAndUsedAtItsAvailability() throws {
        let ledger = AppleAPILedger(markdown: try String(contentsOf: Self.root.appendingPathComponent("docs/ios-api.md"), encoding: .utf8))
        // WatchdogKit's Apple-only code, and the example app's (all of it is), which README shows.
        let sources = try Self.sources()
        let example = try Self.sources(in: "Examples/WatchdogExample/Sources")
        // Plus what the Apple-only code declares itself, in any of its files.
        let portable = Self.portableNames(sources).union((sources + example).flatMap { AppleAPILedger.declaredNames(in: AppleAPILedger.appleOnlyCode($0.code)) })
        let target = try Self.deploymentTarget()
        #expect(target == 13)
        var findings: [AppleAPILedger.Finding] = []
        var used: Set<String> = []
        var appleFiles: [String] = []
        for (name, code) in sources + example where name.hasPrefix("Sources/WatchdogKit/") || name.hasPrefix("Examples/") {
            let apple = AppleAPILedger.appleOnlyCode(code)
            guard apple.contains(where: { !$0.isWhitespace }) else { continue }
            appleFiles.append(name)
            findings += ledger.check(file: name, code: apple, portable: portable, minimumDeployment: target)
            used.formUnion(SwiftSource.identifiers(in: apple))
        }
        #expect(appleFiles.count >= 4 + 7, "\(appleFiles)")
        #expect(findings.isEmpty, "\(findings.map(\.description).joined(separator: "\n"))")
        // No entry for a symbol the code no longer names.
        let stale = ledger.symbols.filter { !used.contains($0.key) }.flatMap(\.value)
        #expect(stale.isEmpty, "in docs/ios-api.md but not used: \(stale.sorted())")
    }

    @Test func theCheckFindsAMissingSymbolAndOneUsedBelowItsAvailability() {
        let ledger = AppleAPILedger(minimumOS: ["UIWindow": 2, "effectiveGeometry": 16, "observe": 2])
        let code = """
            func start(window: UIWindow) {
                let geometry = window.windowScene?.effectiveGeometry
                if #available(iOS 16.0, *) {
                    _ = window.windowScene?.effectiveGeometry
                } else {
                    _ = window.windowScene?.effectiveGeometry
                }
                guard #available(iOS 16, *) else { return }
                _ = window.windowScene?.effectiveGeometry
            }
            @available(iOS 16.0, *)
            func later(window: UIWindow) { _ = window.windowScene?.effectiveGeometry }
            """
        let findings = ledger.check(file: "f", code: code, portable: ["func", "start", "window", "let", "geometry", "if", "else", "_", "guard", "return", "later", "available", "iOS"],
                                    minimumDeployment: 13)
        #expect(findings.map(\.description) == [
            "f:2: windowScene is not in docs/ios-api.md",
            "f:2: effectiveGeometry needs iOS 16.0 — wrap it in `if #available(iOS 16.0, *)`",
            "f:4: windowScene is not in docs/ios-api.md",
            "f:6: windowScene is not in docs/ios-api.md",
            "f:6: effectiveGeometry needs iOS 16.0 — wrap it in `if #available(iOS 16.0, *)`",
            "f:9: windowScene is not in docs/ios-api.md",
            "f:12: windowScene is not in docs/ios-api.md",
        ])
    }

    @Test func onlyCodeInsideUIKitOrSwiftUIBlocksIsAppleOnly() {
        for condition in ["os(iOS)", "canImport(UIKit) && !os(watchOS)"] {
            let code = "let a = 1\n#if \(condition)\nlet b = UIView()\n#if DEBUG\nlet c = 2\n#endif\n#else\nlet d = 3\n#endif\nlet e = 4"
            let apple = AppleAPILedger.appleOnlyCode(code).split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(apple == ["", "", "let b = UIView()", "", "let c = 2", "", "", "", "", ""], "\(condition)")
        }
    }

    /// WatchdogKit is for iOS and iPadOS (and Mac Catalyst): `canImport(UIKit)` would also let
    /// its UIKit and SwiftUI code into tvOS and visionOS builds, where `UIScreen`, the keyboard's
    /// notifications or their keys do not exist.
    @Test func uikitAndSwiftUICodeIsBehindOSiOSNotCanImport() throws {
        var found: [String] = []
        for (name, code) in try Self.sources() where name.hasPrefix("Sources/WatchdogKit/") {
            for (index, line) in code.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where line.contains("#if") || line.contains("#elseif") {
                if line.contains("canImport(UIKit)") || line.contains("canImport(SwiftUI)") { found.append("\(name):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))") }
            }
        }
        #expect(found.isEmpty, "use #if os(iOS):\n\(found.joined(separator: "\n"))")
    }
}
