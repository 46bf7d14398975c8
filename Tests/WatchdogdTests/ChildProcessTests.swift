import Foundation
import Testing

/// The bound on every process wait of the test support: a child that hangs is killed and the
/// test fails with a message naming it, instead of hanging the run.
@Suite struct ChildProcessTests {
    @Test func aChildThatOutlivesItsTimeIsKilledAndNamed() throws {
        let started = Date()
        do {
            _ = try ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo waiting; exec sleep 60"], seconds: 1)
            Issue.record("a child sleeping 60 s came back within its 1 s")
        } catch let error as ProcessTimedOut {
            #expect(error.description.hasPrefix("sh -c echo waiting; exec sleep 60 did not exit within 1 s; killed it"), "\(error)")
            #expect(error.output.contains("waiting"), "what it printed is in the message")
        }
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test func aChildThatExitsInTimeGivesItsStatusAndOutput() throws {
        let result = try ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo out; echo err >&2; exit 3"], seconds: 10)
        #expect(result.status == 3)
        #expect(result.stdout == "out\n")
        #expect(result.stderr == "err\n")
    }
}
