import Foundation
import Locking
import Testing
@testable import WatchdogKit

/// `WatchdogSettings.debugLogging`: the SDK's own lines reach the unified log only when asked.
/// (`DebugLog.destination` stands in for the unified log here; on iOS it is `os_log`.)
@MainActor @Suite struct DebugLoggingTests {
    @Test func theSDKsLinesGoToTheUnifiedLogOnlyWhenDebugLoggingIsOn() {
        let heard = Locked<[String]>([])
        DebugLog.destination.withLock { $0 = { line in heard.withLock { $0.append(line) } } }
        defer { DebugLog.destination.withLock { $0 = nil } }
        let quiet = AgentHarness()
        quiet.agent.logger.child("tracker").log("quiet line")
        let loud = AgentHarness { $0.debugLogging = true }
        loud.agent.logger.child("tracker").log("loud line")
        let lines = heard.withLock { $0 }
        #expect(lines.contains("[keyboard][tracker] loud line"))
        #expect(!lines.contains { $0.contains("quiet line") })
    }
}
