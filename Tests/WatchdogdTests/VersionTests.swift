import Foundation
import Testing

@Suite struct VersionTests {
    /// `watchdogd --version`: the release and the commit, as the build was told
    /// (`WATCHDOG_BUILD_COMMIT`; deploy/deb/test-clean-system.sh checks the packaged binary's).
    @Test func versionNamesTheReleaseAndTheCommitItWasBuiltFrom() throws {
        let result = try ChildProcess.run(Daemon.binary, ["--version"], seconds: Daemon.commandSeconds)
        #expect(result.status == 0)
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let commit = ProcessInfo.processInfo.environment["WATCHDOG_BUILD_COMMIT"] ?? "unknown, built from source"
        #expect(line.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+ \(commit "#, options: .regularExpression) != nil && line.hasSuffix("(commit \(commit))"), "\(line)")
    }
}
