import Foundation
import Locking
import WatchdogServer

/// TEST ONLY (`--test-clock-file`): the system clock plus an offset in milliseconds read from a
/// file every 50 ms, so daemon tests can let hours pass for the rollout guard's minimum step
/// time, ingest times and alert times alike. Honoured only with `WATCHDOG_TEST_HOOKS=1` in the
/// environment: a production unit that sets the option by mistake refuses to start instead of
/// running on a movable clock.
final class TestClock: Sendable {
    static let environmentFlag = "WATCHDOG_TEST_HOOKS"

    private let offset = Locked<Int64>(0)

    init(path: String) throws {
        guard ProcessInfo.processInfo.environment[Self.environmentFlag] == "1" else {
            throw CLIError("--test-clock-file is for tests only: it is honoured only with \(Self.environmentFlag)=1 in the environment")
        }
        Self.refresh(path, offset)
        // Runs as long as the process: the clock is read until exit.
        ServiceThread.start("wd-test-clock") { [offset] in
            while true {
                usleep(50_000)
                Self.refresh(path, offset)
            }
        }
    }

    private static func refresh(_ path: String, _ offset: Locked<Int64>) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let value = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        offset.withLock { $0 = value }
    }

    var now: @Sendable () -> Int64 {
        { [offset] in WatchdogServer.systemClock() + offset.withLock { $0 } }
    }
}
