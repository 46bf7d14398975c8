import Dispatch
import Locking

/// Threads of their own (`wd-request-1`…) for the requests that may call a database across the
/// network, so that none of them holds a libmicrohttpd worker: `/healthz` and `/readyz`, which
/// call nothing, are answered on the worker at once even while every offloaded request waits
/// for PostgreSQL (issue 45). Threads start as work arrives, up to `width`; the requests beyond
/// wait their turn in order, their connections suspended.
final class RequestOffload: Sendable {
    private struct State {
        var work: [@Sendable () -> Void] = []
        var threads = 0
        var idle = 0
        var stopping = false
    }

    private let state = Locked(State())
    private let ready = DispatchSemaphore(value: 0)
    /// The most requests answered at once.
    let width: Int

    init(width: Int) {
        self.width = max(1, width)
    }

    /// Runs `body` on one of the threads.
    func run(_ body: @escaping @Sendable () -> Void) {
        let startThread: Int? = state.withLock { state in
            state.work.append(body)
            guard state.idle == 0, state.threads < width, !state.stopping else { return nil }
            state.threads += 1
            return state.threads
        }
        if let number = startThread {
            ServiceThread.start("wd-request-\(number)") { [self] in loop() }
        }
        ready.signal()
    }

    /// Lets each thread finish what it runs and end; work queued after this never runs.
    func stop() {
        let threads = state.withLock { state in
            state.stopping = true
            return state.threads
        }
        for _ in 0..<threads { ready.signal() }
    }

    private func loop() {
        while true {
            state.withLock { $0.idle += 1 }
            ready.wait()
            let next: (@Sendable () -> Void)?? = state.withLock { state in
                state.idle -= 1
                if state.stopping { return .some(nil) }
                return state.work.isEmpty ? .none : .some(state.work.removeFirst())
            }
            switch next {
            case .some(nil): return
            case .some(let body?): body()
            case .none: continue
            }
        }
    }
}
