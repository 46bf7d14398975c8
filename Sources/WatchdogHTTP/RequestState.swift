/// What one request accumulates between libmicrohttpd's calls to the access handler; kept in
/// `*req_cls` and released in the completion callback.
///
/// Touched only by the libmicrohttpd thread serving the connection, one call at a time, so it
/// needs no lock; the cross-thread hand-over lives in `HTTPResponder`.
final class RequestState {
    let method: String
    let path: String
    var headers: HTTPHeaders
    var query: [String: String] = [:]
    var clientAddress: String = ""
    var body: [UInt8] = []
    /// A response was queued early (too large a body); further chunks are dropped.
    var answeredEarly = false
    /// The body passed the cap while streaming; the rest is dropped and 413 sent at the end.
    var bodyTooLarge = false
    var droppedBytes = 0
    /// The body's claim on the body budget, taken on the headers and given back on completion.
    var reservation: BodyReservation?
    /// The connection is suspended until the reservation is granted, expires or the server
    /// stops; the next call (libmicrohttpd repeats the headers call) reads which.
    var waitingForBudget = false
    var responder: HTTPResponder?
    /// The answer `answerFromHeaders` gave on the first call, queued on the last.
    var prepared: PreparedResponse?

    init(method: String, path: String, headers: HTTPHeaders) {
        self.method = method
        self.path = path
        self.headers = headers
    }
}
