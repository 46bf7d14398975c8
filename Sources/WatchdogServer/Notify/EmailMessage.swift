import Foundation

/// One alert e-mail (RFC 5322, MIME): `text/plain` in UTF-8, its body base64 (so no line of
/// client text is read as a header, a boundary or SMTP's end-of-data dot), its subject an RFC
/// 2047 encoded word (so a CR/LF in a release name cannot end the header and start another).
/// The addresses are checked ones (`EmailAddress`), the other headers ours.
struct EmailMessage {
    var from: String
    var to: [String]
    var subject: String
    var text: String
    var messageID: String
    /// Milliseconds since 1970: the `Date` header.
    var date: Int64
    var headers: [(String, String)] = []

    func bytes() -> [UInt8] {
        var lines = [
            "From: \(from)",
            "To: \(to.joined(separator: ", "))",
            "Subject: \(Self.encodedWords(subject))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
        ]
        for (name, value) in headers { lines.append("\(name): \(Self.headerSafe(value))") }
        lines.append("")
        let body = Data(text.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        lines.append(body)
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// `=?UTF-8?B?…?=` words of at most 45 bytes of text each (75 characters a word, RFC 2047),
    /// cut between characters, with control characters made spaces first.
    static func encodedWords(_ text: String) -> String {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        var words: [String] = [], chunk = ""
        for character in clean {
            if chunk.utf8.count + String(character).utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty || words.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?\(Data($0.utf8).base64EncodedString())?=" }.joined(separator: "\r\n ")
    }

    /// Our own header values: printable ASCII only.
    static func headerSafe(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }))
    }

    static func rfc5322Date(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
