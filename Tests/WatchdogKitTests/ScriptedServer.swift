import Foundation
import Logging
import WatchdogHTTP

/// A real HTTP server (the project's libmicrohttpd layer) that answers with scripted
/// responses in order and records what it received: for delivery behaviour that needs an exact
/// sequence of answers. The daemon does send 429 with `Retry-After` (ingest rate limits, too
/// many unknown credentials from one address) and 503 when overloaded, but not on cue, nor with
/// a chosen wait, nor 5xx in a chosen order; `KitDeliveryTests` runs WatchdogKit against the
/// real daemon.
final class ScriptedServer: @unchecked Sendable {
    private let lock = NSLock()
    private var script: [HTTPResponse]
    private var received: [HTTPRequest] = []
    private var server: HTTPServer!

    init(script: [HTTPResponse]) throws {
        self.script = script
        var configuration = HTTPServerConfiguration(address: ListenAddress("127.0.0.1:0")!) { error in
            HTTPResponse(status: 500, body: Array("\(error)".utf8))
        }
        configuration.threads = 1
        server = try HTTPServer(configuration: configuration, logger: Logger(label: "scripted")) { [unowned self] request, responder in
            lock.lock()
            received.append(request)
            let response = self.script.isEmpty ? HTTPResponse(status: 500) : self.script.removeFirst()
            lock.unlock()
            responder.respond(response)
        }
    }

    var url: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    var requests: [HTTPRequest] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    deinit { server.shutdown(drainSeconds: 1) }
}
