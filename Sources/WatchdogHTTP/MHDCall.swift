import CMicroHTTPD

/// A libmicrohttpd call answered `MHD_NO` (or no object): the one error every such result
/// becomes, so none is dropped on the floor.
struct MHDCallFailed: Error, CustomStringConvertible {
    /// The call and what it was given, e.g. `MHD_add_response_header(Location)`.
    var call: String

    var description: String { "libmicrohttpd refused \(call)" }
}

/// The choke point for libmicrohttpd's return codes in the response path.
enum MHDCall {
    /// Throws when `result` is `MHD_NO`. libmicrohttpd 0.9.75 documents `MHD_NO` from
    /// `MHD_add_response_header` for "invalid header or content format, or out of memory"
    /// (a name or value with CR, LF or tab; a name with a space or colon).
    static func check(_ result: MHD_Result, _ call: @autoclosure () -> String) throws(MHDCallFailed) {
        guard result == .YES else { throw MHDCallFailed(call: call()) }
    }

    /// Unwraps a created object, throwing when libmicrohttpd returned `NULL` (out of memory).
    static func created(_ pointer: OpaquePointer?, _ call: @autoclosure () -> String) throws(MHDCallFailed) -> OpaquePointer {
        guard let pointer else { throw MHDCallFailed(call: call()) }
        return pointer
    }
}
