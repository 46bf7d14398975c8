import CMicroHTTPD
import Locking

/// Hands a response back to a request, now or later and from any thread.
///
/// A handler that can answer at once calls `respond` before it returns. One that waits (for the
/// ingest writer's commit, say) keeps the responder and calls `respond` when done; meanwhile
/// the connection is suspended (`MHD_suspend_connection`), so libmicrohttpd's few threads
/// serve other connections instead of blocking.
public final class HTTPResponder: Sendable {
    private enum Phase {
        case waiting
        case suspended
        case responded(HTTPResponse)
        case delivered
    }

    private let connection: ConnectionHandle
    private let registry: SuspendedConnections
    private let phase = Locked<Phase>(.waiting)

    init(connection: ConnectionHandle, registry: SuspendedConnections) {
        self.connection = connection
        self.registry = registry
    }

    /// Answers the request. Only the first call counts.
    public func respond(_ response: HTTPResponse) {
        let mustResume = phase.withLock { phase -> Bool in
            switch phase {
            case .waiting:
                phase = .responded(response)
                return false
            case .suspended:
                phase = .responded(response)
                return true
            case .responded, .delivered:
                return false
            }
        }
        // libmicrohttpd: "Calling this function on a connection that was not previously
        // suspended will result in undefined behavior" — hence the phase check under the lock.
        if mustResume {
            registry.remove(self)
            MHD_resume_connection(connection.pointer)
        }
    }

    /// Called on libmicrohttpd's thread after the handler returned: the response if there is
    /// one, otherwise the connection is suspended until `respond` resumes it.
    func takeResponseOrSuspend() -> HTTPResponse? {
        phase.withLock { phase in
            switch phase {
            case .responded(let response):
                phase = .delivered
                return response
            case .waiting:
                // Suspending under the lock orders it before any resume from `respond`.
                registry.insert(self)
                MHD_suspend_connection(connection.pointer)
                phase = .suspended
                return nil
            case .suspended, .delivered:
                return nil
            }
        }
    }
}

/// A libmicrohttpd connection pointer that may cross threads: libmicrohttpd documents
/// `MHD_resume_connection` as callable from any thread.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
