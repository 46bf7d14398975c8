/// Request headers, names compared case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable {
    /// Names are stored lowercased.
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) {
        for (name, value) in fields { add(name: name, value: value) }
    }

    public mutating func add(name: String, value: String) {
        fields.append((Self.lowercased(name), value))
    }

    /// The first value of a header, or `nil`.
    public subscript(name: String) -> String? {
        let wanted = Self.lowercased(name)
        return fields.first(where: { $0.name == wanted })?.value
    }

    /// `name` itself when it has no ASCII capital (most names, every lookup in this code):
    /// `lowercased()` would build a new string on every request.
    private static func lowercased(_ name: String) -> String {
        name.utf8.contains(where: { $0 >= 65 && $0 <= 90 || $0 >= 128 }) ? name.lowercased() : name
    }
}

/// A complete HTTP request: headers, query and the whole body, already decompressed.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query, percent-decoded by libmicrohttpd.
    public var path: String
    /// Query arguments, percent-decoded; the last value wins when a name repeats.
    public var query: [String: String]
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The peer's IP address as text.
    public var clientAddress: String

    public init(method: String, path: String, query: [String: String] = [:], headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], clientAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.clientAddress = clientAddress
    }
}
