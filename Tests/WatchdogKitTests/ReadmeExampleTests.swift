import Foundation
import Testing

/// The iOS guide's WatchdogKit code (docs/ios.md) and the DocC article's are the example app's code
/// (`Examples/WatchdogExample`, which `.ci/run` type-checks against the iOS SDK when it has
/// one), line for line.
@Suite struct ReadmeExampleTests {
    static let root = PrivacyManifestTests.packageRoot

    static func exampleSources() throws -> [String] {
        let folder = root.appendingPathComponent("Examples/WatchdogExample/Sources")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { try String(contentsOf: $0, encoding: .utf8) }
    }

    @Test func everySwiftBlockOfTheIOSGuideIsLinesOfTheExampleApp() throws {
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/ios.md"), encoding: .utf8)
        let blocks = ReadmeExample.swiftBlocks(in: guide)
        let sources = try Self.exampleSources()
        #expect(blocks.count >= 4, "docs/ios.md shows the app's set-up, its screens and the test-crash keys")
        #expect(sources.count >= 5)
        for block in blocks {
            let mismatch = ReadmeExample.firstMismatch(of: block.lines, in: sources)
            #expect(mismatch == nil, "docs/ios.md:\(block.line): this line is not where it stands in Examples/WatchdogExample: \(mismatch ?? "")")
        }
    }

    @Test func everySwiftBlockOfTheGettingStartedArticleIsLinesOfTheExampleApp() throws {
        let article = try String(contentsOf: Self.root.appendingPathComponent("Sources/WatchdogKit/WatchdogKit.docc/GettingStarted.md"), encoding: .utf8)
        let blocks = ReadmeExample.swiftBlocks(in: article)
        let sources = try Self.exampleSources()
        #expect(blocks.count >= 6, "the article walks the app's set-up and both screens")
        for block in blocks {
            let mismatch = ReadmeExample.firstMismatch(of: block.lines, in: sources)
            #expect(mismatch == nil, "GettingStarted.md:\(block.line): this line is not where it stands in Examples/WatchdogExample: \(mismatch ?? "")")
        }
    }

    @Test func aLineChangedMovedOrReindentedIsNotTheApps() {
        let file = """
            func start() {
                let agent = makeAgent()
                agent.start()   // a comment

                driver.watch(toolbar,
                             named: "composeToolbar")
            }
            """
        #expect(ReadmeExample.contains(file, ["let agent = makeAgent()", "agent.start()   // a comment"]))
        #expect(ReadmeExample.contains(file, ["    agent.start()   // a comment", "", "    driver.watch(toolbar,", "                 named: \"composeToolbar\")"]))
        #expect(!ReadmeExample.contains(file, ["let agent = makeAgent()", "agent.start()"]), "a comment dropped")
        #expect(!ReadmeExample.contains(file, ["agent.start()   // a comment", "let agent = makeAgent()"]), "the order changed")
        #expect(!ReadmeExample.contains(file, ["driver.watch(toolbar,", "named: \"composeToolbar\")"]), "the continuation re-indented")
        #expect(ReadmeExample.firstMismatch(of: ["let agent = makeAgent()", "agent.begin()"], in: [file]) == "agent.begin()")
    }

    @Test func onlyTheWatchdogKitSectionsSwiftBlocksAreRead() {
        let readme = """
            ## Server
            ```swift
            outside()
            ```
            ## In the app: WatchdogKit
            ```swift
            inside()
            ```
            ### Privacy
            ```json
            {"not": "swift"}
            ```
            ```swift
            alsoInside()
            ```
            ## Next
            ```swift
            after()
            ```
            """
        #expect(ReadmeExample.swiftBlocks(inWatchdogKitSectionOf: readme).map(\.lines) == [["inside()"], ["alsoInside()"]])
    }
}
