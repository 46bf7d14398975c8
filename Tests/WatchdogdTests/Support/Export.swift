import Foundation

extension Response {
    /// The body of a `Transfer-Encoding: chunked` response without its chunk framing.
    var dechunked: [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while index < body.count {
            guard let lineEnd = (index..<body.count - 1).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }),
                  let size = Int(String(decoding: body[index..<lineEnd], as: UTF8.self), radix: 16), size > 0,
                  lineEnd + 2 + size <= body.count else { break }
            output += body[(lineEnd + 2)..<(lineEnd + 2 + size)]
            index = lineEnd + 2 + size + 2
        }
        return output
    }
}

extension Daemon {
    /// The id of every report the daemon stores for `app`, once per stored row, read through
    /// the NDJSON export (the public API, so no test depends on the SQL schema).
    func exportedReportIDs(app: String = "com.example.mail", viewer: String) throws -> [String] {
        let export = try client.request("GET", "/v1/apps/\(app)/reports.ndjson", token: viewer)
        guard export.status == 200 else { throw HTTPClientError(description: "export answered \(export.status): \(export.text)") }
        return export.dechunked.split(separator: UInt8(ascii: "\n")).map { line in
            ((try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any])?["id"] as? String ?? "<unreadable line>"
        }
    }
}
