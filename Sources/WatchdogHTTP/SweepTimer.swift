import Dispatch
import Synchronization

/// A quarter-second timer on a queue of its own, for the server's deadlines: headers that do
/// not arrive (`ConnectionDeadlines`), bodies that wait too long for the budget (`BodyBudget`)
/// and bodies that take too long to arrive once granted (`BodyDeadlines`).
final class SweepTimer: Sendable {
    private let sweep: @Sendable (Double) -> Void
    private let stopped = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// `sweep` is called with `monotonicSeconds()` every quarter second once started.
    init(sweep: @escaping @Sendable (Double) -> Void) {
        self.sweep = sweep
    }

    func start() {
        DispatchQueue(label: "watchdogd.deadlines").async { [self] in
            while !stopped.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + .milliseconds(250))
                sweep(monotonicSeconds())
            }
            finished.signal()
        }
    }

    /// Stops the timer and waits for it.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        finished.wait()
    }
}
