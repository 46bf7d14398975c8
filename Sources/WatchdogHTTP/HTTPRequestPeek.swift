import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `GET` request whose headers have arrived, read in place from libmicrohttpd: what
/// `HTTPServerConfiguration.answerFromHeaders` sees. Nothing is copied until asked for, so a
/// hot path pays only for the headers and arguments it reads.
///
/// Valid only during the call it is given to; it holds libmicrohttpd's connection.
public struct HTTPRequestPeek {
    private let connection: OpaquePointer
    /// The path without the query, percent-decoded by libmicrohttpd.
    public let path: String

    init(connection: OpaquePointer, path: String) {
        self.connection = connection
        self.path = path
    }

    /// The first value of the header `name` (compared case-insensitively), as
    /// `HTTPRequest.headers[name]` would give it; `nil` when absent.
    public func header(_ name: String) -> String? {
        MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
    }

    /// Whether the first value of the header `name` is exactly `value`, compared in place
    /// (nothing is copied); `false` when the header is absent.
    public func header(_ name: String, is value: String) -> Bool {
        guard let found = MHD_lookup_connection_value(connection, .HEADER_KIND, name) else { return false }
        var value = value
        return value.withUTF8 { bytes in
            strlen(found) == bytes.count && (bytes.isEmpty || memcmp(found, bytes.baseAddress!, bytes.count) == 0)
        }
    }

    /// The query arguments named in `names`, in that order, with the values
    /// `HTTPRequest.query` would hold: names compared exactly, the last value kept when a name
    /// repeats, `""` for an argument without a value. Other arguments are skipped.
    public func arguments(_ names: [StaticString]) -> [String?] {
        var scan = ArgumentScan(names: names)
        withUnsafeMutablePointer(to: &scan) { pointer in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, Self.collect, pointer)
        }
        return scan.values
    }

    private struct ArgumentScan {
        let names: [StaticString]
        var values: [String?]

        init(names: [StaticString]) {
            self.names = names
            values = Array(repeating: nil, count: names.count)
        }
    }

    private static let collect: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let scan = cls.assumingMemoryBound(to: ArgumentScan.self)
        let length = strlen(key)
        for (index, name) in scan.pointee.names.enumerated()
        where name.utf8CodeUnitCount == length && memcmp(key, name.utf8Start, length) == 0 {
            scan.pointee.values[index] = value.map { String(cString: $0) } ?? ""
            return .YES
        }
        return .YES
    }
}
