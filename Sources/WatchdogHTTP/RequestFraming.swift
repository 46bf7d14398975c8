/// Checks that a request's body length can be read one way only (RFC 9112 §6.1, §6.3), before
/// libmicrohttpd reads any of the body.
///
/// libmicrohttpd 0.9.75 reads `Transfer-Encoding` when present and the first `Content-Length`
/// otherwise, without looking at the other headers; a proxy in front may read the same bytes
/// differently, and what one takes for a body the other takes for the next request
/// (`Content-Length` with `chunked`, or `Content-Length: 0` then `Content-Length: N`). Such a
/// request is refused and its connection closed, so nothing after its headers is parsed.
/// Values libmicrohttpd cannot parse itself (`-5`, `0x10`, `1 2`, twenty digits) never reach
/// the access handler: libmicrohttpd answers them with its own 400 or 413 and closes.
enum RequestFraming {
    /// The error for a request whose framing is ambiguous or unsupported, or `nil`.
    static func error(in headers: HTTPHeaders) -> HTTPLayerError? {
        let lengths = headers.fields.filter { $0.name == "content-length" }.map(\.value)
        let encodings = headers.fields.filter { $0.name == "transfer-encoding" }.map(\.value)
        if !encodings.isEmpty {
            if !lengths.isEmpty {
                return .ambiguousFraming("Content-Length and Transfer-Encoding together")
            }
            let codings = encodings.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { trimmed($0).lowercased() }
            if let unknown = codings.first(where: { $0 != "chunked" && !$0.isEmpty }) {
                return .unsupportedTransferEncoding(String(unknown.prefix(64)))
            }
            guard codings == ["chunked"] else {
                return .ambiguousFraming("Transfer-Encoding must be chunked, once")
            }
            return nil
        }
        if lengths.count > 1 {
            return .ambiguousFraming("Content-Length repeated")
        }
        if let length = lengths.first {
            let digits = trimmed(length)
            guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return .ambiguousFraming("Content-Length must be a decimal number")
            }
        }
        return nil
    }

    /// The value without the spaces and tabs around it (RFC 9110 §5.5, optional whitespace).
    private static func trimmed<Text: StringProtocol>(_ value: Text) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(value.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
