import CMicroHTTPD
import Locking

/// Memory that bodies being received may hold, in all and per client (one address, or one
/// client behind a trusted proxy), with back-pressure instead of refusals: a request that does
/// not fit waits, its connection suspended, so its bytes stay in the kernel's socket buffer
/// instead of the heap.
///
/// The design:
/// - **Whole reservations, taken on the headers.** A request reserves its whole declared
///   `Content-Length` (a chunked body `maxBodyBytes`, the excess given back once it is
///   complete) before libmicrohttpd reads a byte of its body, and keeps it until the request
///   completes (its response sent), so the body, its decoded batch and the wait for the group
///   commit are all covered. Counting chunk by chunk could deadlock: 256 half-received bodies
///   could fill the budget with none able to finish. A granted request needs nothing more to
///   finish, and one whose client stops sending, or sends too slowly, is closed by its body's
///   deadline (`BodyDeadlines`).
/// - **Waiting.** A request that does not fit is queued and its connection suspended
///   (`MHD_suspend_connection` on the access handler's first call). libmicrohttpd 0.9.75 then
///   stays in its "headers processed" state: it reads nothing more from the socket and, for
///   `Expect: 100-continue`, sends no `100 Continue` yet. After `MHD_resume_connection` it
///   calls the access handler's first call again (no data, size 0), where the request learns
///   its fate (`phase`): granted, it returns and the body is read (after `100 Continue` if
///   asked); otherwise it is answered at once and the connection closed.
/// - **Fairness.** Waiting requests are granted in arrival order, skipping those whose client
///   already holds its share; the first one held back by the total stops the pass, so small
///   requests arriving later never overtake a large one for ever. One client that never
///   finishes its bodies holds at most its share, and each reservation only until its body's
///   deadline (`BodyDeadlines`); everyone else's requests pass it.
/// - **A bound on waiting.** A request waiting longer than `maxWaitSeconds` is resumed and
///   answered 503 `overloaded` (`bodyMemoryExhausted`) with `Retry-After`. libmicrohttpd does
///   not time out suspended connections, so without the bound a client at its share would keep
///   its waiting connections for ever.
/// - **Shutdown.** `close` resumes every waiting request to be answered 503 `shutting_down`
///   and refuses new reservations: `MHD_stop_daemon` aborts the process if a connection is
///   still suspended.
/// - **Progress whatever the configuration.** A reservation larger than the share or the total
///   is granted when its client, or everyone, holds nothing.
///
/// Resuming happens outside the lock, after the waiter left the queue; suspending happens
/// under it, when the waiter enters the queue, so no connection is resumed before it was
/// suspended, and each is resumed once.
final class BodyBudget: Sendable {
    let total: Int
    let perClient: Int
    let maxWaitSeconds: Double

    private struct Books {
        var held = 0
        var byClient: [String: Int] = [:]
        /// Waiting requests, in arrival order.
        var queue: [BodyReservation] = []
        var closed = false
    }

    private let books = Locked(Books())

    init(total: Int, perClient: Int, maxWaitSeconds: Double) {
        self.total = total
        self.perClient = perClient
        self.maxWaitSeconds = maxWaitSeconds
    }

    /// Reserves `bytes` for `client`, called from the access handler's first call: `.granted`
    /// at once when it fits and nobody it may not pass waits ahead of it, otherwise `.waiting`
    /// with `connection` suspended; `.closed` when shutting down.
    func reserve(_ bytes: Int, for client: String, suspending connection: OpaquePointer, now: Double) -> (BodyReservation, BodyReservation.Phase) {
        let reservation = BodyReservation(bytes: bytes, client: client, since: now, connection: ConnectionHandle(pointer: connection))
        let (phase, granted) = books.withLock { books -> (BodyReservation.Phase, [BodyReservation]) in
            guard !books.closed else {
                reservation.phase = .closed
                return (.closed, [])
            }
            books.queue.append(reservation)
            var granted = admit(&books)
            if let index = granted.firstIndex(where: { $0 === reservation }) {
                granted.remove(at: index)
            } else {
                MHD_suspend_connection(connection)
            }
            return (reservation.phase, granted)
        }
        resume(granted)
        return (reservation, phase)
    }

    /// What became of a reservation (read after its connection was resumed).
    func phase(of reservation: BodyReservation) -> BodyReservation.Phase {
        books.withLock { _ in reservation.phase }
    }

    /// Gives back what `reservation` holds beyond `bytes` (a chunked body, once complete).
    func shrink(_ reservation: BodyReservation, to bytes: Int) {
        let granted = books.withLock { books -> [BodyReservation] in
            guard reservation.phase == .granted, bytes < reservation.bytes else { return [] }
            take(bytes - reservation.bytes, for: reservation.client, in: &books)
            reservation.bytes = bytes
            return admit(&books)
        }
        resume(granted)
    }

    /// Gives back everything `reservation` holds: its request completed.
    func release(_ reservation: BodyReservation) {
        let granted = books.withLock { books -> [BodyReservation] in
            switch reservation.phase {
            case .granted:
                take(-reservation.bytes, for: reservation.client, in: &books)
                reservation.phase = .released
                return admit(&books)
            case .waiting:
                // Not reached: a suspended connection does not complete. Kept consistent anyway.
                books.queue.removeAll { $0 === reservation }
                reservation.phase = .released
                return []
            case .expired, .closed, .released:
                return []
            }
        }
        resume(granted)
    }

    /// Resumes the requests that waited longer than `maxWaitSeconds`, to be answered 503.
    func expire(now: Double) {
        let expired = books.withLock { books -> [BodyReservation] in
            let (late, onTime) = books.queue.partitioned { now - $0.since > maxWaitSeconds }
            guard !late.isEmpty else { return [] }
            books.queue = onTime
            for reservation in late { reservation.phase = .expired }
            return late
        }
        resume(expired)
    }

    /// Refuses new reservations and resumes every waiting request, to be answered 503.
    func close() {
        let waiting = books.withLock { books -> [BodyReservation] in
            books.closed = true
            let waiting = books.queue
            books.queue = []
            for reservation in waiting { reservation.phase = .closed }
            return waiting
        }
        resume(waiting)
    }

    /// Grants waiting requests in arrival order, skipping those whose client is at its share
    /// and stopping at the first the total holds back; returns those granted, out of the queue.
    private func admit(_ books: inout Books) -> [BodyReservation] {
        var granted: [BodyReservation] = []
        var index = 0
        while index < books.queue.count {
            let reservation = books.queue[index]
            let clientHeld = books.byClient[reservation.client] ?? 0
            if clientHeld > 0 && clientHeld + reservation.bytes > perClient {
                index += 1
                continue
            }
            if books.held > 0 && books.held + reservation.bytes > total { break }
            take(reservation.bytes, for: reservation.client, in: &books)
            reservation.phase = .granted
            books.queue.remove(at: index)
            granted.append(reservation)
        }
        return granted
    }

    private func take(_ bytes: Int, for client: String, in books: inout Books) {
        books.held += bytes
        let now = (books.byClient[client] ?? 0) + bytes
        books.byClient[client] = now > 0 ? now : nil
    }

    private func resume(_ reservations: [BodyReservation]) {
        for reservation in reservations { MHD_resume_connection(reservation.connection.pointer) }
    }
}

/// One request's claim on the `BodyBudget`. Its mutable fields are read and written only under
/// the budget's lock.
final class BodyReservation: @unchecked Sendable {
    enum Phase: Equatable {
        /// Queued, its connection suspended.
        case waiting
        /// Holding `bytes`: the body may be read.
        case granted
        /// Waited past `maxWaitSeconds`: answer 503 `overloaded`.
        case expired
        /// The server is shutting down: answer 503 `shutting_down`.
        case closed
        /// Given back when the request completed.
        case released
    }

    fileprivate var bytes: Int
    /// What was asked for, before a chunked body's excess was given back.
    let requested: Int
    /// The client whose share it counts against.
    let client: String
    fileprivate let since: Double
    fileprivate let connection: ConnectionHandle
    fileprivate var phase = Phase.waiting

    fileprivate init(bytes: Int, client: String, since: Double, connection: ConnectionHandle) {
        self.bytes = bytes
        self.requested = bytes
        self.client = client
        self.since = since
        self.connection = connection
    }
}

extension Array {
    /// The elements for which `belongs` holds, and the others, each in their order.
    fileprivate func partitioned(by belongs: (Element) -> Bool) -> ([Element], [Element]) {
        var yes: [Element] = []
        var no: [Element] = []
        for element in self {
            if belongs(element) { yes.append(element) } else { no.append(element) }
        }
        return (yes, no)
    }
}
