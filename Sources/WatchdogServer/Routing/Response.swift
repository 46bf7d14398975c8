import Locking
import WatchdogHTTP

/// What a handler returns: a response now — its body in memory or streamed
/// (`HTTPResponse.stream`) — or one promised for later, when the ingest writer has committed.
///
/// The transport decides how to wait: libmicrohttpd suspends the connection until the promise
/// is kept; `WatchdogTesting` blocks the test's thread on it.
public enum Response: Sendable {
    case now(HTTPResponse)
    case later(PendingResponse)

    /// Calls `body` once with the response: at once, or when the promise is kept.
    public func whenReady(_ body: @escaping @Sendable (HTTPResponse) -> Void) {
        switch self {
        case .now(let response): body(response)
        case .later(let pending): pending.whenReady(body)
        }
    }
}

/// A response promised now and given later, from any thread; only the first `respond` counts.
public final class PendingResponse: Sendable {
    private enum State {
        case waiting([@Sendable (HTTPResponse) -> Void])
        case ready(HTTPResponse)
    }

    private let state = Locked<State>(.waiting([]))

    public init() {}

    /// Keeps the promise. Later calls are ignored.
    public func respond(_ response: HTTPResponse) {
        let waiting = state.withLock { state -> [@Sendable (HTTPResponse) -> Void] in
            guard case .waiting(let waiting) = state else { return [] }
            state = .ready(response)
            return waiting
        }
        for body in waiting { body(response) }
    }

    /// Calls `body` with the response once it is given (at once if it already is).
    public func whenReady(_ body: @escaping @Sendable (HTTPResponse) -> Void) {
        let ready = state.withLock { state -> HTTPResponse? in
            switch state {
            case .ready(let response): return response
            case .waiting(let waiting):
                state = .waiting(waiting + [body])
                return nil
            }
        }
        if let ready { body(ready) }
    }
}
