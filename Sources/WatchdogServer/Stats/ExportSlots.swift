import Locking

/// Streamed exports running at once: at most `perCredential` for one token or session's
/// credential and `total` in all. A stalled export holds a page of reports and is pumped on
/// one of libmicrohttpd's few threads; without a cap, one token starting hundreds of exports
/// and never reading them took hundreds of megabytes and everyone's latency.
///
/// A slot is held by the export's stream and given back when libmicrohttpd frees it: when the
/// export ends, the client goes away, or the connection times out.
final class ExportSlots: Sendable {
    let perCredential: Int
    let total: Int
    private let running = Locked<(all: Int, byCredential: [String: Int])>((0, [:]))

    init(perCredential: Int = 2, total: Int = 16) {
        self.perCredential = perCredential
        self.total = total
    }

    /// A slot for `credential`, or the error to answer with when none is free.
    func acquire(for credential: String) throws(APIError) -> ExportSlot {
        let refusal = running.withLock { running -> APIError? in
            let mine = running.byCredential[credential] ?? 0
            if mine >= perCredential {
                return APIError(status: 429, code: "rate_limited",
                                 message: "this credential runs \(perCredential) exports already; finish or close one, or retry after 5 s",
                                 headers: [("Retry-After", "5")])
            }
            if running.all >= total { return .overloaded("\(total) exports are running; retry shortly") }
            running.all += 1
            running.byCredential[credential] = mine + 1
            return nil
        }
        if let refusal { throw refusal }
        return ExportSlot(credential: credential, slots: self)
    }

    fileprivate func release(_ credential: String) {
        running.withLock { running in
            running.all -= 1
            let left = (running.byCredential[credential] ?? 1) - 1
            running.byCredential[credential] = left > 0 ? left : nil
        }
    }
}

/// One running export's claim; given back when it is released (with its stream).
final class ExportSlot: Sendable {
    private let credential: String
    private let slots: ExportSlots

    fileprivate init(credential: String, slots: ExportSlots) {
        self.credential = credential
        self.slots = slots
    }

    deinit { slots.release(credential) }
}
