import CMicroHTTPD
import Gzip
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C callbacks given to libmicrohttpd. They live in a library `enum` rather than in
/// top-level code, which is `@MainActor` and crashed when called on libmicrohttpd's threads.
enum Callbacks {
    /// `MHD_AccessHandlerCallback`. libmicrohttpd calls it once with the headers, once per body
    /// chunk, then once with `*upload_data_size == 0`, when the response is queued: answering
    /// on the first call would make 0.9.75 close keep-alive connections.
    static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, requestSlot in
        guard let cls, let connection, let uploadDataSize, let requestSlot else { return .NO }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

        guard let slot = requestSlot.pointee else {
            context.deadlines.headersReceived(connection)
            let state = begin(connection: connection, url: url, method: method, context: context)
            requestSlot.pointee = Unmanaged.passRetained(state).toOpaque()
            if context.draining.load(ordering: .relaxed) {
                state.answeredEarly = true
                return queue(context.configuration.renderError(.shuttingDown), on: connection, context: context)
            }
            // Answered from the headers: a GET without Content-Length or Transfer-Encoding.
            if state.prepared != nil { return .YES }
            if let framing = RequestFraming.error(in: state.headers) {
                return answerWithoutBody(framing, state: state, on: connection, context: context)
            }
            let length = state.headers["content-length"].flatMap(Int.init)
            if let length, length > context.configuration.maxBodyBytes {
                state.answeredEarly = true
                return queue(context.configuration.renderError(.payloadTooLarge(limit: context.configuration.maxBodyBytes, decompressed: false)), on: connection, context: context)
            }
            if (length ?? 0) > 0 || state.headers["transfer-encoding"] != nil {
                // A body is coming: route and authenticate on the headers first, so nobody
                // can make the server buffer a body it would refuse anyway.
                let head = HTTPRequestHead(method: state.method, path: state.path, query: state.query, headers: state.headers, clientAddress: state.clientAddress)
                let budgetKey: String
                switch context.configuration.admit(head) {
                case .refuse(let response):
                    state.answeredEarly = true
                    return queue(response, on: connection, context: context, closing: true)
                case .accept(let key):
                    budgetKey = key
                }
                // The whole body's bytes, before any is read: a chunked one may be as large as allowed.
                let (reservation, phase) = context.bodyBudget.reserve(length ?? context.configuration.maxBodyBytes, for: budgetKey,
                                                                      suspending: connection, now: monotonicSeconds())
                state.reservation = reservation
                state.waitingForBudget = phase == .waiting
                if phase == .granted { context.bodyDeadlines.granted(reservation, on: connection, now: monotonicSeconds()) }
                if phase == .closed { return answerWithoutBody(.shuttingDown, state: state, on: connection, context: context) }
            }
            return .YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(slot).takeUnretainedValue()

        if state.waitingForBudget, let reservation = state.reservation {
            // Resumed: libmicrohttpd repeats the headers call. Granted, the body is read next
            // (after `100 Continue` when the client asked for it); otherwise answered unread.
            state.waitingForBudget = false
            switch context.bodyBudget.phase(of: reservation) {
            case .granted:
                context.bodyDeadlines.granted(reservation, on: connection, now: monotonicSeconds())
                return .YES
            case .closed: return answerWithoutBody(.shuttingDown, state: state, on: connection, context: context)
            case .expired, .waiting, .released: return answerWithoutBody(.bodyMemoryExhausted, state: state, on: connection, context: context)
            }
        }

        if uploadDataSize.pointee > 0 {
            let count = uploadDataSize.pointee
            uploadDataSize.pointee = 0
            if state.answeredEarly { return .YES }
            if state.bodyTooLarge || state.body.count + count > context.configuration.maxBodyBytes {
                // libmicrohttpd 0.9.75 refuses MHD_queue_response while a body is still being
                // received, so the excess is read and dropped, and 413 is sent on the final call.
                // A client that keeps streaming far past the cap is cut off instead.
                state.bodyTooLarge = true
                state.body = []
                state.droppedBytes += count
                return state.droppedBytes > 8 * context.configuration.maxBodyBytes ? .NO : .YES
            }
            if let uploadData {
                if state.body.isEmpty, let length = state.headers["content-length"].flatMap(Int.init), length <= context.configuration.maxBodyBytes {
                    state.body.reserveCapacity(length)
                }
                uploadData.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
                    state.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
                }
            }
            return .YES
        }
        // The body is complete: its deadline no longer applies (the group commit is not the client's doing).
        if state.reservation != nil { context.bodyDeadlines.bodyReceived(connection) }
        if state.answeredEarly { return .YES }
        if let prepared = state.prepared {
            // Answered from the headers (`answerFromHeaders`); while draining, as a copy that
            // closes the connection.
            if context.draining.load(ordering: .relaxed) { return queue(prepared.response, on: connection, context: context) }
            return MHD_queue_response(connection, UInt32(prepared.response.status), prepared.pointer)
        }
        if state.bodyTooLarge {
            state.answeredEarly = true
            return queue(context.configuration.renderError(.payloadTooLarge(limit: context.configuration.maxBodyBytes, decompressed: false)),
                         on: connection, context: context)
        }

        if let responder = state.responder {
            // Called again after `MHD_resume_connection`: the response is ready.
            guard let response = responder.takeResponseOrSuspend() else { return .YES }
            return queue(response, on: connection, context: context)
        }

        let request: HTTPRequest
        switch decodedRequest(state, context: context) {
        case .success(let decoded): request = decoded
        case .failure(let error): return queue(context.configuration.renderError(error), on: connection, context: context)
        }
        if let reservation = state.reservation, state.headers["content-length"] == nil {
            // A chunked body reserved the most allowed; what it did not use goes to others now.
            context.bodyBudget.shrink(reservation, to: state.body.count)
        }
        state.body = []
        let responder = HTTPResponder(connection: ConnectionHandle(pointer: connection), registry: context.suspended)
        state.responder = responder
        context.handler(request, responder)
        guard let response = responder.takeResponseOrSuspend() else { return .YES }
        return queue(response, on: connection, context: context)
    }

    /// `MHD_AcceptPolicyCallback`: while draining, a new connection is closed as soon as it is
    /// accepted, so clients and load balancers see the refusal at once.
    static let acceptPolicy: MHD_AcceptPolicyCallback = { cls, _, _ in
        guard let cls else { return .NO }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        return context.draining.load(ordering: .relaxed) ? .NO : .YES
    }

    /// `MHD_NotifyConnectionCallback`: connections opened and closed, for the header and body deadlines.
    static let connectionEvent: MHD_NotifyConnectionCallback = { cls, connection, _, code in
        guard let cls, let connection else { return }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        switch code {
        case .CONNECTION_NOTIFY_STARTED: context.deadlines.opened(connection)
        case .CONNECTION_NOTIFY_CLOSED:
            context.deadlines.closed(connection)
            context.bodyDeadlines.closed(connection)
        @unknown default: break
        }
    }

    /// `MHD_RequestCompletedCallback`: releases the per-request state.
    static let completed: MHD_RequestCompletedCallback = { cls, connection, requestSlot, _ in
        if let cls, let connection {
            Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines.requestCompleted(connection)
        }
        guard let cls, let requestSlot, let slot = requestSlot.pointee else { return }
        let state = Unmanaged<RequestState>.fromOpaque(slot).takeRetainedValue()
        requestSlot.pointee = nil
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        if let reservation = state.reservation { context.bodyBudget.release(reservation) }
        context.requestsInFlight.subtract(1, ordering: .relaxed)
    }

    /// `MHD_LogCallback`: libmicrohttpd's own error messages, into swift-log.
    static let log: MHD_LogCallback = { cls, format, arguments in
        guard let cls, let format, let arguments else { return }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        var buffer = [CChar](repeating: 0, count: 512)
        _ = watchdog_format_log(&buffer, buffer.count, format, arguments)
        let message = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        context.logger.warning("libmicrohttpd: \(message.trimmingSuffixNewlines())")
    }

    private static let collectHeader: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
        state.headers.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
        return .YES
    }

    private static let collectQuery: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
        state.query[String(cString: key)] = value.map { String(cString: $0) } ?? ""
        return .YES
    }

    private static func begin(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, context: ServerContext) -> RequestState {
        context.requestsInFlight.add(1, ordering: .relaxed)
        let state = RequestState(
            method: method.map { String(cString: $0) } ?? "GET",
            path: url.map { String(cString: $0) } ?? "/",
            headers: HTTPHeaders()
        )
        if let answer = context.configuration.answerFromHeaders, state.method == "GET",
           MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") == nil,
           MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") == nil,
           let prepared = answer(HTTPRequestPeek(connection: connection, path: state.path)) {
            // No body can follow, so nothing else of the request is read.
            state.prepared = prepared
            return state
        }
        let unmanaged = Unmanaged.passUnretained(state).toOpaque()
        MHD_get_connection_values(connection, .HEADER_KIND, collectHeader, unmanaged)
        // A request rarely has more query arguments than this: no rehashing as they arrive.
        state.query.reserveCapacity(8)
        MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectQuery, unmanaged)
        state.clientAddress = clientAddress(of: connection)
        return state
    }

    /// Answers on a headers call, before any body byte is read; closing the connection keeps
    /// the bytes after these headers from being read as a request.
    private static func answerWithoutBody(_ error: HTTPLayerError, state: RequestState, on connection: OpaquePointer, context: ServerContext) -> MHD_Result {
        state.answeredEarly = true
        return queue(context.configuration.renderError(error), on: connection, context: context, closing: true)
    }

    private static func decodedRequest(_ state: RequestState, context: ServerContext) -> Result<HTTPRequest, HTTPLayerError> {
        var body = state.body
        if let encoding = state.headers["content-encoding"]?.lowercased(), encoding != "identity" {
            guard encoding == "gzip" || encoding == "x-gzip" else {
                return .failure(.unsupportedContentEncoding(encoding))
            }
            do {
                body = try Gzip.decompress(body, limit: context.configuration.maxDecodedBodyBytes)
            } catch {
                switch error {
                case .tooLarge(let limit): return .failure(.payloadTooLarge(limit: limit, decompressed: true))
                case .corrupt(let reason): return .failure(.malformedContentEncoding(reason))
                }
            }
        }
        return .success(HTTPRequest(method: state.method, path: state.path, query: state.query, headers: state.headers, body: body, clientAddress: state.clientAddress))
    }

    /// Queues `response`. When libmicrohttpd refuses to build it (a header it does not accept,
    /// no memory), the failure is logged and a 500 (`HTTPLayerError.responseRejected`) goes out
    /// instead, on a connection then closed; when even that cannot be built, `.NO` tells
    /// libmicrohttpd to close the connection. `MHD_queue_response`'s own `.NO` is returned to
    /// libmicrohttpd, which closes the connection.
    private static func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: ServerContext, closing: Bool = false) -> MHD_Result {
        // Shutting down, or the request's framing cannot be trusted: no more requests on this connection.
        let closing = closing || context.draining.load(ordering: .relaxed)
        var status = response.status
        let created: OpaquePointer
        do {
            created = try build(response, closing: closing, context: context)
        } catch {
            context.logger.error("a \(response.status) response could not be built; answering 500: \(error)")
            let fallback = context.configuration.renderError(.responseRejected(error.description))
            do {
                created = try build(fallback, closing: true, context: context)
                status = fallback.status
            } catch {
                context.logger.error("the 500 could not be built either; closing the connection: \(error)")
                return .NO
            }
        }
        let result = MHD_queue_response(connection, UInt32(status), created)
        MHD_destroy_response(created)
        return result
    }

    /// A libmicrohttpd response with every header of `response`; destroyed again on failure.
    private static func build(_ response: HTTPResponse, closing: Bool, context: ServerContext) throws(MHDCallFailed) -> OpaquePointer {
        guard let stream = response.stream else { return try withHeaders(of: response, closing: closing, on: try buffer(of: response)) }
        let pump = Unmanaged.passRetained(StreamPump(stream: stream, context: context)).toOpaque()
        let made = MHD_create_response_from_callback(UInt64.max, 64 * 1024, StreamPump.read, pump, StreamPump.free)
        if made == nil { Unmanaged<StreamPump>.fromOpaque(pump).release() }
        return try withHeaders(of: response, closing: closing, on: try MHDCall.created(made, "MHD_create_response_from_callback"))
    }

    /// A libmicrohttpd response of an in-memory `response` with all its headers, for
    /// `PreparedResponse`.
    static func buffered(_ response: HTTPResponse) throws(MHDCallFailed) -> OpaquePointer {
        try withHeaders(of: response, closing: false, on: try buffer(of: response))
    }

    private static func buffer(of response: HTTPResponse) throws(MHDCallFailed) -> OpaquePointer {
        try MHDCall.created(makeBufferResponse(response), "MHD_create_response_from_buffer(\(response.body.count) bytes)")
    }

    /// `created` with the headers of `response` added; destroyed when one is refused.
    private static func withHeaders(of response: HTTPResponse, closing: Bool, on created: OpaquePointer) throws(MHDCallFailed) -> OpaquePointer {
        do {
            for header in response.headers {
                try MHDCall.check(MHD_add_response_header(created, header.name, header.value), "MHD_add_response_header(\(header.name))")
            }
            if closing {
                try MHDCall.check(MHD_add_response_header(created, "Connection", "close"), "MHD_add_response_header(Connection)")
            }
        } catch {
            MHD_destroy_response(created)
            throw error
        }
        return created
    }

    private static func makeBufferResponse(_ response: HTTPResponse) -> OpaquePointer? {
        response.body.withUnsafeBytes { bytes in
            // MUST_COPY: libmicrohttpd keeps its own copy, so the Swift array may go away.
            var empty: UInt8 = 0
            let base = bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) }
            return withUnsafeMutablePointer(to: &empty) { emptyPointer in
                MHD_create_response_from_buffer(bytes.count, base ?? UnsafeMutableRawPointer(emptyPointer), .RESPMEM_MUST_COPY)
            }
        }
    }

    private static func clientAddress(of connection: OpaquePointer) -> String {
        guard let address = watchdog_connection_client_address(connection) else { return "" }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var raw = inet.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            }
        case AF_INET6:
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                var raw = inet.pointee.sin6_addr
                _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
            }
        default:
            return ""
        }
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension String {
    func trimmingSuffixNewlines() -> String {
        var text = self
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}

/// Feeds an `HTTPBodyStream` to libmicrohttpd's content-reader callback, keeping the part of a
/// chunk that did not fit in libmicrohttpd's buffer for the next call.
final class StreamPump {
    let stream: any HTTPBodyStream
    let context: ServerContext
    var pending: [UInt8] = []
    var offset = 0

    init(stream: any HTTPBodyStream, context: ServerContext) {
        self.stream = stream
        self.context = context
    }

    /// `MHD_ContentReaderCallback`: copy up to `max` bytes into `buffer`.
    static let read: MHD_ContentReaderCallback = { cls, _, buffer, max in
        guard let cls, let buffer else { return -2 }
        let pump = Unmanaged<StreamPump>.fromOpaque(cls).takeUnretainedValue()
        while pump.offset >= pump.pending.count {
            do {
                guard let next = try pump.stream.nextChunk() else { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
                pump.pending = next
                pump.offset = 0
            } catch {
                pump.context.logger.error("streamed response failed: \(error)")
                return -2  // MHD_CONTENT_READER_END_WITH_ERROR: the connection is closed
            }
        }
        let count = min(max, pump.pending.count - pump.offset)
        pump.pending.withUnsafeBytes { bytes in
            buffer.update(from: bytes.baseAddress!.advanced(by: pump.offset).assumingMemoryBound(to: CChar.self), count: count)
        }
        pump.offset += count
        return count
    }

    /// `MHD_ContentReaderFreeCallback`.
    static let free: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        Unmanaged<StreamPump>.fromOpaque(cls).release()
    }
}
